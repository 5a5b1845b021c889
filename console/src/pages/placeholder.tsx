/** A page that is not written yet: says so, rather than showing nothing. */
import { PageHeading } from '../components/page-heading.tsx';

export function Placeholder({ title }: { title: string }) {
  return (
    <section>
      <PageHeading title={title} />
      <p>This page is not available in the console yet; the API offers it under /api/v1 (see the API documentation at /docs).</p>
    </section>
  );
}
