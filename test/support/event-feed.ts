/**
 * A Server-Sent Events reader over fetch, for tests of the change feed:
 * parses `event`/`id`/`data` blocks and comments as they arrive, and waits
 * for the next one that matches.
 *
 * @example
 * const feed = await openFeed(`${baseUrl}/api/v1/contexts/orders/validator/events`, { 'x-api-key': key, 'x-tenant-id': 'acme' });
 * const first = await feed.next((m) => m.event === 'published');
 * feed.close();
 */
export interface FeedMessage {
  event?: string;
  id?: string;
  data?: string;
  /** A comment line (`: heartbeat`), without its colon. */
  comment?: string;
}

export interface Feed {
  readonly status: number;
  readonly headers: Headers;
  /** Every message so far. */
  readonly messages: FeedMessage[];
  /** The first message not yet taken that matches, waiting up to `timeoutMs`. */
  next(matches: (message: FeedMessage) => boolean, timeoutMs?: number): Promise<FeedMessage>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export async function openFeed(url: string, headers: Record<string, string>): Promise<Feed> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const messages: FeedMessage[] = [];
  let taken = 0;
  const waiters = new Set<() => void>();
  let endedResolve!: () => void;
  const ended = new Promise<void>((done) => (endedResolve = done));
  const notify = (): void => {
    for (const waiter of waiters) waiter();
  };
  if (response.body !== null && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const message: FeedMessage = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) message.comment = line.slice(1).trim();
              else {
                const colon = line.indexOf(':');
                const field = line.slice(0, colon);
                const value = line.slice(colon + 1).trimStart();
                if (field === 'event' || field === 'id' || field === 'data') message[field] = value;
              }
            }
            messages.push(message);
            notify();
          }
        }
      } catch {
        // Aborted by close().
      }
      endedResolve();
      notify();
    })();
  } else {
    endedResolve();
  }
  let closed = false;
  void ended.then(() => (closed = true));
  return {
    status: response.status,
    headers: response.headers,
    messages,
    ended,
    next(matches, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const look = (): boolean => {
          while (taken < messages.length) {
            const message = messages[taken++];
            if (matches(message)) {
              resolve(message);
              return true;
            }
          }
          if (closed) reject(new Error('the feed ended'));
          return closed;
        };
        if (look()) return;
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        const waiter = (): void => {
          if (look()) {
            clearTimeout(timer);
            waiters.delete(waiter);
          }
        };
        waiters.add(waiter);
      });
    },
    close() {
      abort.abort();
    },
  };
}
