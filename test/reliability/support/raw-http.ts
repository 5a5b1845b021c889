/**
 * HTTP/1.1 over a plain socket, for requests that fetch would refuse or
 * normalize: header values with raw non-ASCII bytes, repeated headers,
 * headers near or past the parser's size limit.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends one request (`Connection: close` is added) and reads the answer
 * until the server closes the connection.
 *
 * @example
 * await rawRequest(baseUrl, 'GET', '/health/live', [['X-Tenant-Id', Buffer.from('ключ')]]);
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Array<[string, string | Buffer]>,
  body?: string,
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const parts: Buffer[] = [Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n`, 'latin1')];
  for (const [name, value] of headers) {
    parts.push(Buffer.from(`${name}: `, 'latin1'), typeof value === 'string' ? Buffer.from(value, 'latin1') : value, Buffer.from('\r\n'));
  }
  if (body !== undefined) {
    parts.push(Buffer.from(`Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`));
  }
  parts.push(Buffer.from('\r\n'));
  if (body !== undefined) parts.push(Buffer.from(body));
  const request = Buffer.concat(parts);

  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      const [statusLine, ...lines] = head.split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) parsed[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: parsed, body: split < 0 ? '' : text.slice(split + 4) });
    });
  });
}
