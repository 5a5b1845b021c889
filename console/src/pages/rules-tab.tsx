/** A context's rules (milestone 2 fills this in). */
import { PageHeading } from '../components/page-heading.tsx';
import type { ContextTabProps } from './context-tabs.tsx';

export function RulesTab({ context }: ContextTabProps) {
  return (
    <section>
      <PageHeading title={`Rules of ${context}`} />
    </section>
  );
}
