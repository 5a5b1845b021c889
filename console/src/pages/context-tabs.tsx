/**
 * The pages of one context, as tabs: each has a label (its link's
 * accessible name), a path segment after the context in the URL
 * (`#/contexts/orders/history`) and a component. Add a page here.
 */
import type { FunctionComponent } from 'preact';
import { ChangesTab } from './changes-tab.tsx';
import { FilesTab } from './files-tab.tsx';
import { HistoryTab } from './history-tab.tsx';
import { RulesTab } from './rules-tab.tsx';
import { SchemaTab } from './schema-tab.tsx';
import { TestsTab } from './tests-tab.tsx';
import { ValidatorTab } from './validator-tab.tsx';

export interface ContextTabProps {
  readonly context: string;
}

export interface ContextTab {
  /** The path segment; 'rules' is the context's own URL. */
  readonly id: string;
  readonly label: string;
  readonly component: FunctionComponent<ContextTabProps>;
}

export const CONTEXT_TABS: readonly ContextTab[] = [
  { id: 'rules', label: 'Rules', component: RulesTab },
  { id: 'changes', label: 'Changes', component: ChangesTab },
  { id: 'history', label: 'History', component: HistoryTab },
  { id: 'tests', label: 'Tests', component: TestsTab },
  { id: 'payload-schema', label: 'Payload schema', component: SchemaTab },
  { id: 'files', label: 'Export and import', component: FilesTab },
  { id: 'validator', label: 'Validator', component: ValidatorTab },
];
