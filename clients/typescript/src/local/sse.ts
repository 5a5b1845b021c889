/**
 * A small Server-Sent Events reader over a fetch response body, so the
 * change feed works where EventSource cannot send headers (an API key) and
 * in Node alike. It follows the event-stream format: `event:`, `data:`
 * (joined by newlines), `id:`, `retry:`, comments (`:`) ignored, events
 * dispatched on a blank line.
 */

export interface ServerSentEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export interface ReadEventsOptions {
  /** Receives a `retry:` field (the reconnection delay the server asks for). */
  onRetry?: (ms: number) => void;
  /** Called on every chunk received, heartbeat comments included: the stream is alive. */
  onActivity?: () => void;
}

/** Reads events from `body` until it ends. */
export async function* readEvents(body: ReadableStream<Uint8Array>, options: ReadEventsOptions = {}): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      options.onActivity?.();
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A CR at the end may be the first half of a CRLF still on its way.
        if (buffer[newline] === '\r' && newline === buffer.length - 1) break;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n'), id };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\u0000')) id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) options.onRetry?.(Number(value));
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
