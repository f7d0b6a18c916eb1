import { PACKAGE } from '../package-info.ts';
import { type Config, ConfigError, loadConfig } from './environment.ts';

/**
 * `node dist/main.js --check` (docs/operating.md#checking-a-configuration): reads the settings and
 * every file they name with the same `loadConfig()` a start uses, so a rule is written once and the
 * check and the start can never disagree, then prints what the gateway would serve (exit 0) or each
 * problem on a line of its own (exit 2, as a start refused for its settings). It listens on no
 * port, opens no Redis connection, starts no emulator and sends nothing upstream: what only a
 * running gateway can find out (a taken port, an unreachable Redis, a key the service refuses) is
 * left to the start and to `/ready`.
 */

/** The command-line flag main.ts looks for. */
export const CHECK_FLAG = '--check';

/** Exit status of a configuration refused, as main.ts exits for one at start. */
export const CONFIG_REFUSED = 2;

/**
 * What a gateway with `config` would serve, one fact a line, for an operator to read before a
 * rollout. Never a credential: no upstream key, client key digest, JWT secret, OPS_TOKEN, HMAC or
 * webhook key, and URLs without their user and password.
 */
export function describeConfiguration(config: Config): string {
  const lines: string[] = [`reservation-gateway ${PACKAGE.version}: the configuration is valid`];
  const fact = (label: string, value: string) => lines.push(`  ${`${label}:`.padEnd(16)}${value}`);
  fact('clients', `http://${hostPort(config.host, config.port)}/graphql (HOST, PORT)${portZero(config.port)}`);
  fact('allowed hosts', config.allowedHosts.join(', '));
  fact(
    'operators',
    `http://${hostPort(config.opsHost, config.opsPort)}/status and /metrics (OPS_HOST, OPS_PORT)${portZero(config.opsPort)}, ${
      config.opsToken ? 'OPS_TOKEN required' : 'connections from this machine only (no OPS_TOKEN)'
    }`,
  );
  fact(
    'upstream',
    config.upstreamBaseUrl
      ? withoutCredentials(config.upstreamBaseUrl)
      : 'the embedded emulator and its demo data (no UPSTREAM_BASE_URL; not started by --check)',
  );
  fact('auth', authLine(config));
  fact(
    'documents',
    config.trustedDocuments
      ? `${config.trustedDocuments.size} trusted document${config.trustedDocuments.size === 1 ? '' : 's'} (TRUSTED_DOCUMENTS_FILE): only these run`
      : 'any document; automatic persisted queries (no TRUSTED_DOCUMENTS_FILE)',
  );
  fact(
    'redis',
    config.redis
      ? `on, ${withoutCredentials(config.redis.url)} (prefix ${config.redis.prefix}; not connected by --check)`
      : 'off: tokens, budget and caches kept by this process alone',
  );
  fact('graphiql', config.graphiql ? 'on' : 'off');
  lines.push(`  licensees (${config.licensees.length}):`);
  for (const licensee of config.licensees) {
    const { systemIdentifier, timeZone } = licensee.account;
    lines.push(
      `    ${licensee.id}: systemIdentifier ${systemIdentifier}, time zone ${timeZone}, ${licensee.rateLimit} upstream requests a rate window`,
    );
    if (licensee.clients.length === 0 && config.auth.mode === 'api-key') lines.push('      no client');
    for (const client of licensee.clients) lines.push(`      client ${client.name}: ${client.scopes.join(', ')}`);
  }
  if (config.warnings.length > 0) {
    lines.push(`  warnings (${config.warnings.length}):`);
    for (const warning of config.warnings) lines.push(`    ${warning}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The check as a command: loads the settings of `env`, writes the description to `out` or the
 * problems to `err`, and returns the exit status (0, or 2 for settings refused).
 */
export function checkConfiguration(
  env: Record<string, string | undefined> = process.env,
  out: (text: string) => void = (text) => process.stdout.write(text),
  err: (text: string) => void = (text) => process.stderr.write(text),
): number {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // loadConfig's message names every problem, one line each, and never a secret's value.
    err(`${error.message}\n`);
    return CONFIG_REFUSED;
  }
  out(describeConfiguration(config));
  return 0;
}

function authLine(config: Config): string {
  const { auth } = config;
  switch (auth.mode) {
    case 'none':
      return `none (GATEWAY_AUTH): every request acts for licensee ${config.licensees[0]?.id}`;
    case 'api-key':
      return 'api-key (GATEWAY_AUTH): clients send a key of LICENSEES_FILE';
    case 'jwt':
      return `jwt (GATEWAY_AUTH), ${
        'secret' in auth.verify ? 'HS256 with JWT_SECRET' : `keys of ${withoutCredentials(auth.verify.jwksUrl)}`
      }, issuer ${auth.issuer}, audience ${auth.audience}, licensee claim ${auth.licenseeClaim}`;
  }
}

function hostPort(host: string, port: number): string {
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

function portZero(port: number): string {
  return port === 0 ? ' (port 0: a free port picked at start)' : '';
}

/** A URL without its user, password, query and fragment (a Redis password, a token in a query). */
function withoutCredentials(text: string): string {
  try {
    const url = new URL(text);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    // new URL adds a path of "/" to a bare origin: shown as it was written.
    return text.endsWith('/') || !url.href.endsWith('/') ? url.href : url.href.slice(0, -1);
  } catch {
    return '(a URL that cannot be shown)';
  }
}
