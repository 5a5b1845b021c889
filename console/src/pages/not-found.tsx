import { PageHeading } from '../components/page-heading.tsx';
import { href } from '../router.ts';

export function NotFound({ path }: { path: string }) {
  return (
    <section>
      <PageHeading title="Page not found" />
      <p>The console has no page at <code>{path}</code>.</p>
      <p><a href={href.contexts()}>Go to the contexts</a></p>
    </section>
  );
}
