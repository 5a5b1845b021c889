/**
 * How the API's refusals are shown: in its own words, next to what caused
 * them. ProblemMessage is the whole refusal (role="alert", so a screen
 * reader says it at once); FieldProblems is the part about one field, with
 * an id the field's aria-describedby names.
 */
import type { ApiError } from '../api.ts';

export function ProblemMessage({ error, id }: { error: ApiError | undefined; id?: string }) {
  if (error === undefined) return null;
  return (
    <div class="problem" role="alert" id={id}>
      <p>{error.detail}</p>
      {error.errors.length > 0 && (
        <ul>
          {error.errors.map((entry, index) => (
            <li key={index}>{entry.path === '' ? '' : <code>{entry.path}</code>}{entry.path === '' ? '' : ': '}{entry.message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The field errors of `error` about `field` (nothing when there are none). */
export function FieldProblems({ error, field, id }: { error: ApiError | undefined; field: string; id: string }) {
  const entries = error?.errorsAt(field) ?? [];
  if (entries.length === 0) return null;
  return (
    <ul class="field-problems" id={id}>
      {entries.map((entry, index) => (
        <li key={index}>
          {entry.message}
          {entry.line !== undefined && ` (line ${entry.line}${entry.column !== undefined ? `, column ${entry.column}` : ''})`}
        </li>
      ))}
    </ul>
  );
}
