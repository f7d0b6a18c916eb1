import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { KUBECTL_INSTALL_HINT, kubectlOrSkip, PROMTOOL_INSTALL_HINT, promtoolOrSkip } from '../helpers/deploy-tools.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * deploy/prometheus/alerts.yaml: each rule names only metrics the gateway's /metrics serves, the
 * alerts docs/operating.md promises are there, and promtool (where it is installed; CI installs it)
 * accepts the rules and prometheus.yml and passes the rules' unit tests in alerts.test.yaml.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RULES = join(ROOT, 'deploy/prometheus/alerts.yaml');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);

/** Metrics Prometheus itself gives every target. */
const PROMETHEUS_OWN = new Set(['up']);
const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
]);

/** The metric names a PromQL expression reads (strings, label matchers, ranges and grouping labels left out). */
function metricsIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/(?<![\w:.])([A-Za-z_:][\w:]*)\b(?!\s*\()/g)].map((m) => m[1]!);
  return [...new Set(names.filter((name) => !PROMQL_WORDS.has(name)))];
}

describe('metricsIn', () => {
  it('finds the metrics of an expression, not its functions, labels, matchers or ranges', () => {
    expect(
      metricsIn('sum by (instance) (rate(a_total{status=~"5..", path!~"/ready"}[5m])) / on (x) b > 0.01 and up == 0'),
    ).toEqual(['a_total', 'b', 'up']);
  });
});

describe('deploy/prometheus/alerts.yaml', () => {
  let t: TestGateway;
  let served: Set<string>;
  beforeAll(async () => {
    t = await startGateway({ rateLimit: false }, { OPS_TOKEN: 'ops-token-for-the-alerts-test-0123456789' });
    const res = await t.gateway.operators.fetch('http://yoga/metrics', {
      headers: { authorization: 'Bearer ops-token-for-the-alerts-test-0123456789' },
    });
    expect(res.status).toBe(200);
    // prom-client declares every metric (`# TYPE name kind`), with samples or not; a histogram's series carry suffixes.
    served = new Set(
      [...(await res.text()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, kind]) =>
        kind === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!],
      ),
    );
  });
  afterAll(() => t?.close());

  it('names only metrics /metrics serves (or Prometheus’ own up)', () => {
    expect(rules.length).toBeGreaterThan(0);
    const unknown = rules.flatMap((rule) =>
      metricsIn(rule.expr)
        .filter((name) => !served.has(name) && !PROMETHEUS_OWN.has(name))
        .map((name) => `${rule.alert}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('alerts on budget use over 90 %, an open breaker, 5xx answers and token renewal failures', () => {
    const reading = (metric: string) =>
      rules.filter((rule) => metricsIn(rule.expr).includes(metric)).map((rule) => rule.alert);
    expect(reading('gateway_upstream_budget_used')).toEqual(['GatewayUpstreamBudgetNearlySpent']);
    expect(rules.find((rule) => rule.alert === 'GatewayUpstreamBudgetNearlySpent')!.expr).toMatch(/> 0\.9\b/);
    expect(reading('gateway_upstream_breaker_open')).toEqual(['GatewayUpstreamBreakerOpen']);
    expect(reading('gateway_http_responses_total')).toEqual(['GatewayServerErrors']);
    expect(rules.find((rule) => rule.alert === 'GatewayServerErrors')!.expr).toContain('status=~"5.."');
    expect(reading('gateway_upstream_token_failures_total')).toEqual(['GatewayUpstreamTokenFailures']);
  });

  it('gives every alert a severity, a summary and a description', () => {
    for (const rule of rules) {
      expect(rule.labels?.severity, rule.alert).toMatch(/^(warning|critical)$/);
      expect(rule.annotations?.summary, rule.alert).toEqual(expect.any(String));
      expect(rule.annotations?.description, rule.alert).toEqual(expect.any(String));
    }
  });
});

const promtool = promtoolOrSkip();

describe.skipIf(!promtool)('promtool', () => {
  const run = (...args: string[]) =>
    spawnSync(promtool!, args, { encoding: 'utf8', cwd: join(ROOT, 'deploy/prometheus') });

  it('accepts the rules', () => {
    const checked = run('check', 'rules', 'alerts.yaml');
    expect(checked.status, checked.stdout + checked.stderr).toBe(0);
  });

  it('passes the rules’ unit tests: each alert fires on its series and stays quiet just short of them', () => {
    const tested = run('test', 'rules', 'alerts.test.yaml');
    expect(tested.status, tested.stdout + tested.stderr).toBe(0);
  });

  it('accepts prometheus.yml (with its token file, which compose mounts, stood in for)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'reservation-gateway-prometheus-'));
    try {
      const config = readFileSync(join(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8');
      expect(config).toContain('credentials_file: /run/secrets/ops_token');
      writeFileSync(join(dir, 'ops_token'), 'a-token\n');
      writeFileSync(join(dir, 'prometheus.yml'), config.replace('/run/secrets/ops_token', join(dir, 'ops_token')));
      copyFileSync(RULES, join(dir, 'alerts.yaml'));
      const checked = spawnSync(promtool!, ['check', 'config', join(dir, 'prometheus.yml')], { encoding: 'utf8' });
      expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('finding kubectl and promtool for the deploy tests', () => {
  const none = { PATH: '/nonexistent' };
  it('skips with an install hint when there is none, and fails instead under REQUIRE_KUBECTL=1 or REQUIRE_PROMTOOL=1', () => {
    expect(kubectlOrSkip(none)).toBeUndefined();
    expect(() => kubectlOrSkip({ ...none, REQUIRE_KUBECTL: '1' })).toThrow(
      `REQUIRE_KUBECTL=1 but ${KUBECTL_INSTALL_HINT}`,
    );
    expect(KUBECTL_INSTALL_HINT).toContain('apt-get install kubernetes-client');
    expect(promtoolOrSkip(none)).toBeUndefined();
    expect(() => promtoolOrSkip({ ...none, REQUIRE_PROMTOOL: '1' })).toThrow(
      `REQUIRE_PROMTOOL=1 but ${PROMTOOL_INSTALL_HINT}`,
    );
  });
});
