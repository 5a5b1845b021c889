/**
 * The unit unauthenticated requests are counted by. An IPv4 address is
 * itself; an IPv6 client usually holds a whole /64 and can rotate through
 * it at will, so IPv6 addresses are counted by their /64 prefix. IPv4
 * addresses mapped into IPv6 (`::ffff:192.0.2.1`) count as the IPv4 address.
 */
import { isIPv6 } from 'node:net';

/**
 * The counting bucket of a client address (Fastify's `request.ip`).
 *
 * @example
 * addressBucket('192.0.2.7');                 // '192.0.2.7'
 * addressBucket('2001:db8:1:2:3:4:5:6');      // '2001:db8:1:2::/64'
 * addressBucket('::ffff:192.0.2.7');          // '192.0.2.7'
 */
export function addressBucket(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const lower = ip.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped !== null) return mapped[1];
  const [head, tail] = lower.includes('::') ? lower.split('::') : [lower, undefined];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  // An embedded IPv4 tail (a:b::1.2.3.4) only affects the last 32 bits.
  const tailLength = tailGroups.reduce((sum, group) => sum + (group.includes('.') ? 2 : 1), 0);
  const groups =
    tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailLength).fill('0'), ...tailGroups];
  const prefix = groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, ''));
  return `${prefix.join(':')}::/64`;
}

/**
 * Fastify's `trustProxy` for the TRUST_PROXY setting. A hop count becomes
 * the function form (Fastify accepts a number at run time, but its types
 * do not).
 *
 * @example
 * Fastify({ trustProxy: trustProxySetting(config.trustProxy) });
 */
export function trustProxySetting(
  value: boolean | number | string[],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof value !== 'number') return value;
  return (_address, hop) => hop < value;
}
