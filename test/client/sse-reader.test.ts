/**
 * The client's Server-Sent Events reader (clients/typescript/src/local/sse.ts)
 * on streams cut at awkward places, as a network delivers them: a line end
 * split between chunks, comments (heartbeats), multi-line data, `id:` kept
 * for the events after it, `retry:` reported.
 */
import { describe, expect, it } from 'vitest';
import { readEvents, type ServerSentEvent } from '../../clients/typescript/src/local/sse.ts';

function stream(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function collect(chunks: string[], onRetry?: (ms: number) => void): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readEvents(stream(chunks), { onRetry })) events.push(event);
  return events;
}

describe('readEvents', () => {
  it('reads events split across chunks, with CRLF cut in half, heartbeats and multi-line data', async () => {
    const events = await collect([
      ': heartbeat\r\n\r\nevent: published\r',
      '\nid: 7\r\ndata: {"context":"orders",\r\ndata: "version":2}\r\n\r\n',
      ': heartbeat\n\n',
      'event: published\ndata:{"version":3}\n\n',
    ]);
    expect(events).toEqual([
      { event: 'published', data: '{"context":"orders",\n"version":2}', id: '7' },
      // The last id stays the stream's until another is sent.
      { event: 'published', data: '{"version":3}', id: '7' },
    ]);
  });

  it('names an event without `event:` "message", reports `retry:`, and drops an event the stream ended inside', async () => {
    const retries: number[] = [];
    const events = await collect(['retry: 2500\ndata: a\n\nid: 9\ndata: cut off'], (ms) => retries.push(ms));
    expect(events).toEqual([{ event: 'message', data: 'a', id: undefined }]);
    expect(retries).toEqual([2500]);
  });
});
