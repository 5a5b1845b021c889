/**
 * Rules files at the CLI: reading one from disk and checking its shape
 * with the very JSON Schema POST /contexts/{context}/import uses, so a file
 * the CLI accepts is one the API accepts, and the other way round.
 */
import { readFile } from 'node:fs/promises';
import { Ajv, type ValidateFunction } from 'ajv';
import { schemaErrorsToFieldErrors } from '../http/schema-errors.ts';
import type { IncomingRulesFile } from '../rules/rules-file.ts';
import { importBodySchema } from '../routes/schemas/context-file-schemas.ts';
import { storedTestSchema } from '../routes/schemas/context-test-schemas.ts';
import { CommandError } from './cli-errors.ts';

let validate: ValidateFunction | undefined;

/** The rules file at `path`; CommandError naming each problem when it is not one. */
export async function readRulesFile(path: string): Promise<IncomingRulesFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CommandError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new CommandError(`${path} is not JSON: ${(error as Error).message}`);
  }
  validate ??= new Ajv({ allErrors: true, strict: false }).addSchema(storedTestSchema).compile(importBodySchema);
  if (!validate(document)) {
    throw new CommandError(`${path} is not a rules file:\n${describeErrors(schemaErrorsToFieldErrors(validate.errors ?? []))}`);
  }
  return document as IncomingRulesFile;
}

/** One `  path: message` line per error. */
export function describeErrors(errors: ReadonlyArray<{ path: string; message: string }>): string {
  return errors.map((error) => `  ${error.path === '' ? '(document)' : error.path}: ${error.message}`).join('\n');
}
