/**
 * A page's h1. It sets the document's title, and takes the focus when the
 * page opens, so a keyboard or screen-reader user starts reading at the
 * new page rather than at the link they followed.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function PageHeading({ title, children }: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Rules console`;
    heading.current?.focus();
  }, [title]);
  return <h1 ref={heading} tabIndex={-1}>{children ?? title}</h1>;
}
