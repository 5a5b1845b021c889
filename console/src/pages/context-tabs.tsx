/**
 * The pages of one context, as tabs: each has a label (its link's
 * accessible name), a path segment after the context in the URL
 * (`#/contexts/orders/history`) and a component. Add a page here.
 */
import type { FunctionComponent } from 'preact';
import { Placeholder } from './placeholder.tsx';
import { RulesTab } from './rules-tab.tsx';

export interface ContextTabProps {
  readonly context: string;
}

export interface ContextTab {
  /** The path segment; 'rules' is the context's own URL. */
  readonly id: string;
  readonly label: string;
  readonly component: FunctionComponent<ContextTabProps>;
}

function placeholder(title: string): FunctionComponent<ContextTabProps> {
  return () => <Placeholder title={title} />;
}

export const CONTEXT_TABS: readonly ContextTab[] = [
  { id: 'rules', label: 'Rules', component: RulesTab },
  { id: 'history', label: 'History', component: placeholder('History') },
  { id: 'tests', label: 'Tests', component: placeholder('Tests') },
];
