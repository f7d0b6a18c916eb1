import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook may be sent to, for URLs the gateway is given by clients (not by its
 * operator): HTTPS only, no credentials in the URL, and a host whose every address is public
 * unicast. Checked when an endpoint is registered (`check`) and again on every connection
 * (`atConnection` and `lookup`, in `outbound.ts`'s connector), because a name can resolve to a
 * public address at registration and to 127.0.0.1 later (DNS rebinding). Addresses are parsed and
 * classified by `ipaddr.js`, whose ranges follow the IANA special-purpose address registries
 * (RFC 6890 and its updates).
 *
 * Hosts named in `allowHttpHosts` (a development setting) are exempt from both rules: they may be
 * called over plain HTTP and at any address, so a receiver on a laptop can be reached.
 */

/** Every address a name resolves to now. */
export type Resolve = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export interface AddressPolicyOptions {
  /** Host names (as written in URLs, lower case) that may be called over HTTP and at non-public addresses. */
  allowHttpHosts?: readonly string[];
  /** How names are resolved, at registration and at each connection (tests inject one). @default dns.lookup, all addresses */
  resolve?: Resolve;
}

/**
 * IPv6 public unicast lies in 2000::/3 (global unicast); ipaddr.js calls `unicast` any address of
 * no special range, unallocated space (4000::/3 …) among them.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * Whether `ip` (an IPv4 address as four decimal numbers, or an IPv6 address, no brackets) is a
 * public unicast address: ipaddr.js's range is `unicast` (not loopback, private, link-local and
 * the metadata address, CGNAT, this network, documentation, benchmarking, multicast, reserved,
 * broadcast; nor IPv4-mapped, NAT64, unique-local, 6to4, Teredo), and an IPv6 one is global unicast.
 */
export function isPublicUnicast(ip: string): boolean {
  if (ipaddr.IPv4.isValidFourPartDecimal(ip)) return ipaddr.IPv4.parse(ip).range() === 'unicast';
  if (!ipaddr.IPv6.isValid(ip)) return false;
  const address = ipaddr.IPv6.parse(ip);
  return address.range() === 'unicast' && address.match(GLOBAL_UNICAST_V6);
}

/** A refused address: the reason is safe to show to whoever gave the URL. */
export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
}

const resolveAll: Resolve = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/** The host as written in `address` (between `//` and the path, without credentials or port), lower case; undefined when not `scheme://…`. */
function hostAsWritten(address: string): string | undefined {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\\]*)/i.exec(address.trim())?.[1];
  if (authority === undefined) return undefined;
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1).toLowerCase();
  const colon = host.indexOf(':');
  return (colon === -1 ? host : host.slice(0, colon)).toLowerCase();
}

const unbracketed = (hostname: string) =>
  hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;

export class AddressPolicy {
  private readonly exempt: ReadonlySet<string>;
  private readonly resolve: Resolve;

  constructor(options: AddressPolicyOptions = {}) {
    this.exempt = new Set((options.allowHttpHosts ?? []).map((host) => host.toLowerCase()));
    this.resolve = options.resolve ?? resolveAll;
  }

  /** Why `address` may not be called, judged on the URL alone (no resolution); undefined when it may be. */
  refusal(address: string): string | undefined {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      return 'the URL is not valid';
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'the URL must use https';
    if (url.username || url.password) return 'the URL must not carry credentials';
    const written = hostAsWritten(address);
    if (written === undefined) return 'the URL must be absolute, like https://receiver.example/webhooks';
    const host = unbracketed(url.hostname);
    // The URL parser reads 2130706433, 0177.0.0.1, 0x7f.1 and 127.1 as 127.0.0.1: an IPv4 host must
    // be written as four decimal numbers (before the exemption, which names hosts as written).
    if (isIPv4(host) && !ipaddr.IPv4.isValidFourPartDecimal(written.replace(/\.$/, '')))
      return 'an IPv4 address must be written as four decimal numbers';
    if (this.exempt.has(url.hostname)) return undefined;
    if (url.protocol !== 'https:') return 'the URL must use https';
    if (isIP(host) && !isPublicUnicast(host)) return 'the address is not a public unicast address';
    return undefined;
  }

  /**
   * Why `address` may not be called now, its name resolved (registration); undefined when it may.
   * A name that does not resolve is refused: the endpoint could not be reached.
   */
  async check(address: string): Promise<string | undefined> {
    const refused = this.refusal(address);
    if (refused) return refused;
    const url = new URL(address);
    if (this.exempt.has(url.hostname) || isIP(unbracketed(url.hostname))) return undefined;
    try {
      await this.addressesOf(url.hostname);
      return undefined;
    } catch (error) {
      return error instanceof AddressRefusedError ? error.message : 'the host name does not resolve';
    }
  }

  /** Every address of `hostname`, each public unicast; rejects with AddressRefusedError when one is not. */
  private async addressesOf(hostname: string): Promise<readonly { address: string; family: number }[]> {
    const addresses = await this.resolve(hostname);
    if (addresses.length === 0) throw new Error('no address');
    if (addresses.some(({ address }) => !isPublicUnicast(address)))
      throw new AddressRefusedError('the host name resolves to an address that is not public unicast');
    return addresses;
  }

  /**
   * How a connection to `hostname` (as undici names an origin's host) over `protocol` is judged at
   * connect time: exempt (a development host, connected as usual), refused (why), or to be made
   * through `lookup` (a name; an IP literal allowed here connects without a lookup).
   */
  atConnection(hostname: string, protocol: string): 'exempt' | { refused: string } | 'checked' {
    const name = hostname.toLowerCase();
    if (this.exempt.has(name)) return 'exempt';
    if (protocol !== 'https:') return { refused: 'the URL must use https' };
    const host = unbracketed(name);
    if (isIP(host) && !isPublicUnicast(host)) return { refused: 'the address is not a public unicast address' };
    return 'checked';
  }

  /**
   * A `lookup` for `net.connect` / `tls.connect`: resolves through `resolve`, fails with an
   * AddressRefusedError unless every address is public, so the socket connects only to addresses
   * checked, never to a second resolution.
   */
  readonly lookup = (
    hostname: string,
    options: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    this.addressesOf(hostname).then(
      (addresses) => {
        const [first] = addresses;
        if (options.all) callback(null, addresses as LookupAddress[]);
        else callback(null, first?.address ?? '', first?.family);
      },
      (error: Error) => callback(error, ''),
    );
  };
}
