/**
 * The first line of a stream, read for `--key-stdin`: what an operator
 * pipes in (`< key.txt`, `printf %s "$KEY" |`). Bounded, so a stream that
 * never sends a newline cannot fill the memory.
 */
import { UsageError } from './cli-errors.ts';

/** Longer than any key the service accepts. */
const MAX_LINE_BYTES = 4096;

/**
 * The text before the first newline (or before the end), at most
 * MAX_LINE_BYTES; a longer line is a UsageError.
 *
 * @example
 * await firstLine(process.stdin); // 'rk_…'
 */
export async function firstLine(stream: AsyncIterable<Buffer | string>): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    const end = text.indexOf('\n');
    if (end >= 0) {
      text = text.slice(0, end);
      break;
    }
    if (Buffer.byteLength(text) > MAX_LINE_BYTES) break;
  }
  if (Buffer.byteLength(text) > MAX_LINE_BYTES) throw new UsageError(`--key-stdin: the first line of stdin is longer than ${MAX_LINE_BYTES} bytes`);
  return text;
}
