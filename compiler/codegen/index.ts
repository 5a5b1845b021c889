/**
 * A tiny code-generation library that knows nothing about rules: trusted
 * Code and Names, literals for everything else, a scope for identifiers and
 * a writer for readable, indented output.
 */
export { _, Code, Name, Scope, IDENTIFIER, comment, commentOf, join, layout, lit, safeStringify } from './code.ts';
export { CodeWriter } from './writer.ts';
