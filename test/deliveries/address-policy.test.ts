import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AddressPolicy,
  AddressRefusedError,
  isPublicUnicast,
  type Resolve,
} from '../../src/deliveries/address-policy.ts';
import { OutboundClient } from '../../src/deliveries/outbound.ts';

/*
 * Where a webhook may go: HTTPS to public unicast addresses only, judged on the URL, on every
 * address its name resolves to at registration, and again at each connection (DNS rebinding).
 */

const PUBLIC = '93.184.215.14';
const resolvingTo =
  (table: Record<string, string[]>): Resolve =>
  async (hostname) =>
    (table[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('isPublicUnicast', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'cloud metadata (link-local)'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.254', 'CGNAT'],
    ['0.0.0.0', 'this network'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:8.8.8.8', 'IPv4-mapped, even of a public address'],
    ['64:ff9b::7f00:1', 'NAT64'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'IPv6 link-local'],
    ['ff02::1', 'IPv6 multicast'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['2002:7f00:1::1', '6to4 (carries an IPv4 address)'],
    ['2001:0:4136:e378::1', 'Teredo'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['fec0::1', 'deprecated site-local'],
    ['3fff::1', 'IPv6 documentation (RFC 9637)'],
    ['4000::1', 'outside IPv6 global unicast'],
    ['0177.0.0.1', 'an IPv4 form other than four decimal numbers'],
    ['not an address', 'not an IP at all'],
  ])('refuses %s (%s)', (ip) => {
    expect(isPublicUnicast(ip)).toBe(false);
  });

  it.each([PUBLIC, '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001::1'])(
    'lets %s by',
    (ip) => {
      expect(isPublicUnicast(ip)).toBe(true);
    },
  );
});

describe('AddressPolicy, at registration', () => {
  const policy = new AddressPolicy({
    allowHttpHosts: ['localhost', '127.0.0.1'],
    resolve: resolvingTo({
      'receiver.example': [PUBLIC, '2606:4700:4700::1111'],
      'internal.example': ['10.0.0.5'],
      'mixed.example': [PUBLIC, '127.0.0.1'],
      'metadata.example': ['169.254.169.254'],
      'mapped.example': ['::ffff:127.0.0.1'],
    }),
  });

  it.each([
    ['http://receiver.example/hook', 'the URL must use https'],
    ['ftp://receiver.example/hook', 'the URL must use https'],
    ['https://user:secret@receiver.example/hook', 'the URL must not carry credentials'],
    ['https://user@receiver.example/hook', 'the URL must not carry credentials'],
    ['not a url', 'the URL is not valid'],
    ['https:receiver.example/hook', 'the URL must be absolute, like https://receiver.example/webhooks'],
    ['https://127.0.0.1.nip.example/hook', 'the host name does not resolve'],
    ['https://127.0.0.2/hook', 'the address is not a public unicast address'],
    ['https://10.0.0.1/hook', 'the address is not a public unicast address'],
    ['https://169.254.169.254/latest/meta-data/', 'the address is not a public unicast address'],
    ['https://100.100.1.1/hook', 'the address is not a public unicast address'],
    ['https://[::1]/hook', 'the address is not a public unicast address'],
    ['https://[::ffff:127.0.0.1]/hook', 'the address is not a public unicast address'],
    ['https://[::ffff:7f00:1]/hook', 'the address is not a public unicast address'],
    ['https://[fe80::1]/hook', 'the address is not a public unicast address'],
    ['https://2130706433/hook', 'an IPv4 address must be written as four decimal numbers'],
    ['https://0177.0.0.1/hook', 'an IPv4 address must be written as four decimal numbers'],
    ['https://0x7f.0.0.1/hook', 'an IPv4 address must be written as four decimal numbers'],
    ['https://0x7f000001/hook', 'an IPv4 address must be written as four decimal numbers'],
    ['https://127.1/hook', 'an IPv4 address must be written as four decimal numbers'],
    ['https://0/hook', 'an IPv4 address must be written as four decimal numbers'],
    ['https://%31%32%37.0.0.1/hook', 'an IPv4 address must be written as four decimal numbers'],
    // A decimal form of a public address is refused too: no form but the dotted quad is accepted.
    ['https://134744072/hook', 'an IPv4 address must be written as four decimal numbers'],
    ['https://internal.example/hook', 'the host name resolves to an address that is not public unicast'],
    ['https://mixed.example/hook', 'the host name resolves to an address that is not public unicast'],
    ['https://metadata.example/hook', 'the host name resolves to an address that is not public unicast'],
    ['https://mapped.example/hook', 'the host name resolves to an address that is not public unicast'],
    ['https://localhost.example/hook', 'the host name does not resolve'],
    ['http://localhost.:3000/hook', 'the URL must use https'],
  ])('refuses %s: %s', async (url, reason) => {
    expect(await policy.check(url)).toBe(reason);
  });

  it.each([
    'https://receiver.example/hook',
    'https://RECEIVER.example:8443/hook?x=1',
    `https://${PUBLIC}/hook`,
    'https://[2606:4700:4700::1111]/hook',
    // The development exemption: plain HTTP and a loopback address, for these names only.
    'http://localhost:3000/hook',
    'http://127.0.0.1:3000/hook',
  ])('accepts %s', async (url) => {
    expect(await policy.check(url)).toBeUndefined();
  });

  it('exempts no host unless the setting names it', async () => {
    const strict = new AddressPolicy({ resolve: resolvingTo({ localhost: ['127.0.0.1'] }) });
    expect(await strict.check('http://127.0.0.1:3000/hook')).toBe('the URL must use https');
    expect(await strict.check('https://127.0.0.1:3000/hook')).toBe('the address is not a public unicast address');
    expect(await strict.check('https://127.0.0.1./hook')).toBe('the address is not a public unicast address');
    expect(await strict.check('https://localhost:3000/hook')).toBe(
      'the host name resolves to an address that is not public unicast',
    );
  });
});

describe('AddressPolicy, at each connection', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  /** A TCP listener on 127.0.0.1 that counts the connections it gets (none may arrive). */
  async function witness() {
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    return { port: (server.address() as AddressInfo).port, connections: () => connections };
  }

  it('refuses a name that resolved to a public address at registration and resolves to 127.0.0.1 at delivery', async () => {
    const target = await witness();
    const answers = [[PUBLIC], ['127.0.0.1']];
    const resolved: string[] = [];
    const policy = new AddressPolicy({
      resolve: async (hostname) => {
        resolved.push(hostname);
        return (answers.shift() ?? ['127.0.0.1']).map((address) => ({ address, family: 4 }));
      },
    });
    const url = `https://rebind.example:${target.port}/hook`;
    expect(await policy.check(url)).toBeUndefined();

    const client = new OutboundClient(policy, { timeoutMs: 2_000 });
    closers.push(() => client.close());
    const sent = client.post(url, '{}');
    await expect(sent).rejects.toBeInstanceOf(AddressRefusedError);
    await expect(sent).rejects.toThrow('the host name resolves to an address that is not public unicast');
    expect(resolved).toEqual(['rebind.example', 'rebind.example']);
    expect(target.connections()).toBe(0);
  });

  it('refuses an IP literal that is not public at the connection, with no request sent', async () => {
    const target = await witness();
    const client = new OutboundClient(new AddressPolicy(), { timeoutMs: 2_000 });
    closers.push(() => client.close());
    await expect(client.post(`https://127.0.0.1:${target.port}/hook`, '{}')).rejects.toThrow(
      'the address is not a public unicast address',
    );
    await expect(client.post(`http://127.0.0.1:${target.port}/hook`, '{}')).rejects.toThrow('the URL must use https');
    expect(target.connections()).toBe(0);
  });

  it('does not follow a redirect to a private address, and reads at most the answer bytes it is given', async () => {
    let hits = 0;
    let redirectedTo = 0;
    const server = createHttpServer((request, response) => {
      if (request.url === '/private') {
        redirectedTo++;
        return response.writeHead(204).end();
      }
      hits++;
      if (request.url === '/big') return response.writeHead(500).end('x'.repeat(64 * 1024));
      response.writeHead(302, { location: `http://10.0.0.1/private` }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const client = new OutboundClient(new AddressPolicy({ allowHttpHosts: ['127.0.0.1'] }), {
      timeoutMs: 2_000,
      maxResponseBytes: 2_048,
    });
    closers.push(() => client.close());

    const redirected = await client.post(`http://127.0.0.1:${port}/hook`, '{}');
    expect(redirected.status).toBe(302);
    const big = await client.post(`http://127.0.0.1:${port}/big`, '{}');
    expect(big.status).toBe(500);
    expect(big.body).toBe('x'.repeat(2_048));
    expect({ hits, redirectedTo }).toEqual({ hits: 2, redirectedTo: 0 });
  });

  it('lets an exempt development host be called over HTTP at a loopback address', async () => {
    const server = createHttpServer((_, response) => response.writeHead(204).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const client = new OutboundClient(new AddressPolicy({ allowHttpHosts: ['localhost', '127.0.0.1'] }), {
      timeoutMs: 2_000,
    });
    closers.push(() => client.close());
    expect((await client.post(`http://127.0.0.1:${port}/hook`, '{}')).status).toBe(204);
    // An exempt name is resolved by the system and not checked: localhost is a loopback address.
    expect((await client.post(`http://localhost:${port}/hook`, '{}')).status).toBe(204);
  });
});
