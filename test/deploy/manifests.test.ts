import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig, SETTINGS } from '../../src/config/environment.ts';
import { kubectlOrSkip } from '../helpers/deploy-tools.ts';

/**
 * deploy/kubernetes as `kubectl kustomize` renders it, and deploy/compose.yaml: probes, non-root,
 * resources, every Secret and ConfigMap they name, and every environment variable they set checked
 * against the gateway's own settings (SETTINGS, the keys of the zod schema), so that a renamed
 * setting fails here; then the whole environment of each is given to loadConfig, which must accept it.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const kubectl = kubectlOrSkip();
const scratch = mkdtempSync(join(tmpdir(), 'reservation-gateway-manifests-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: KeyRef; configMapKeyRef?: KeyRef; fieldRef?: { fieldPath: string } };
}
interface KeyRef {
  name: string;
  key: string;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; runAsNonRoot?: boolean };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface PodSpec {
  containers: Container[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  terminationGracePeriodSeconds?: number;
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string } }[];
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown> & { template?: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

const GATEWAY_IMAGE = 'reservation-gateway';
/** Settings whose values are credentials: in the manifests they come from a Secret, never a plain value. */
const CREDENTIALS = ['UPSTREAM_KEY', 'JWT_SECRET', 'OPS_TOKEN', 'REDIS_URL'];
/** What the downward API gives a pod, for the variables that read it. */
const FIELD_SAMPLES: Record<string, string> = { 'status.podIP': '10.1.2.3' };

/**
 * The variables of `env` the gateway does not accept: neither a setting nor a licensee's keyEnv.
 * The one exception is a value of the downward API (the pod's address) that only feeds a
 * setting's value through Kubernetes' `$(NAME)`; the gateway never reads it itself.
 */
function unacceptedVariables(env: readonly EnvVar[], keyEnvs: readonly string[]): string[] {
  const accepted = new Set([...SETTINGS, ...keyEnvs]);
  const feedsASetting = (name: string) =>
    env.some((other) => accepted.has(other.name) && other.value?.includes(`$(${name})`));
  return env
    .filter(
      (variable) => !accepted.has(variable.name) && !(variable.valueFrom?.fieldRef && feedsASetting(variable.name)),
    )
    .map((variable) => variable.name);
}

describe('the check of variable names', () => {
  it('refuses a name the settings do not have (a setting renamed or misspelt), and a keyEnv no licensee names', () => {
    expect(SETTINGS).toEqual(expect.arrayContaining(['PORT', 'HOST', 'REDIS_URL', 'LICENSEES_FILE', 'GATEWAY_AUTH']));
    expect(
      unacceptedVariables(
        [
          { name: 'REDIS_URL', value: 'redis://r' },
          { name: 'REDIS_ADDRESS', value: 'redis://r' },
        ],
        [],
      ),
    ).toEqual(['REDIS_ADDRESS']);
    expect(unacceptedVariables([{ name: 'LICENSEE_1001_KEY', value: 'k' }], [])).toEqual(['LICENSEE_1001_KEY']);
    expect(unacceptedVariables([{ name: 'LICENSEE_1001_KEY', value: 'k' }], ['LICENSEE_1001_KEY'])).toEqual([]);
  });

  it('lets a downward-API value through only when a setting reads it through $(NAME)', () => {
    const podIp: EnvVar = { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } };
    expect(unacceptedVariables([podIp], [])).toEqual(['POD_IP']);
    expect(unacceptedVariables([podIp, { name: 'CORS_ORIGINS', value: 'https://$(POD_IP)' }], [])).toEqual([]);
    expect(unacceptedVariables([podIp, { name: 'SOMETHING_ELSE', value: '$(POD_IP)' }], [])).toEqual([
      'POD_IP',
      'SOMETHING_ELSE',
    ]);
  });
});

describe.skipIf(!kubectl)('deploy/kubernetes, rendered by kubectl kustomize', () => {
  const objects = kubectl ? render(kubectl) : [];
  const find = (kind: string, name?: string) =>
    objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  const deployment = find('Deployment')[0]!;
  const pod = deployment?.spec?.template?.spec as PodSpec;
  const gateway = pod?.containers.find((c) => c.image.split(':')[0] === GATEWAY_IMAGE);
  const podTemplates = objects
    .filter((o) => o.spec?.template?.spec)
    .map((o) => ({ owner: `${o.kind}/${o.metadata.name}`, spec: o.spec!.template!.spec }));
  const containers = podTemplates.flatMap(({ owner, spec }) =>
    spec.containers.map((container) => ({ owner, container })),
  );

  it('holds a Deployment of the gateway with 3 replicas, its Service, PodDisruptionBudget, HorizontalPodAutoscaler, the licensees ConfigMap, the Secret, Prometheus’ scrape job and a Redis', () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(
      [
        'ConfigMap',
        'ConfigMap',
        'Deployment',
        'HorizontalPodAutoscaler',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Secret',
        'Service',
        'Service',
        'StatefulSet',
      ].sort(),
    );
    expect(deployment.spec!.replicas).toBe(3);
    expect(gateway, 'a container running the reservation-gateway image').toBeDefined();
    expect(find('StatefulSet')[0]!.spec!.template!.spec.containers[0]!.image).toMatch(/^redis:/);
  });

  it('probes /health for liveness and start, /ready for readiness, on the port the gateway listens on', () => {
    const port = gateway!.ports!.find((p) => p.name === 'http')!;
    expect(String(port.containerPort)).toBe(envOf(gateway!).PORT);
    expect(gateway!.livenessProbe?.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(gateway!.startupProbe?.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(gateway!.readinessProbe?.httpGet).toEqual({ path: '/ready', port: 'http' });
  });

  it('pauses before stopping, and gives a stopping replica longer than its longest operation', () => {
    const preStop = gateway!.lifecycle?.preStop?.exec?.command ?? [];
    expect(preStop[0]).toBe('sleep');
    const pauseSeconds = Number(preStop[1]);
    expect(pauseSeconds).toBeGreaterThanOrEqual(5);
    // An operation's upstream calls give up at UPSTREAM_DEADLINE_MS (main.ts also exits after 15 s).
    const deadlineSeconds = loadConfig(resolvedEnv(gateway!, objects)).upstream.deadlineMs / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(pauseSeconds + Math.max(deadlineSeconds, 15));
  });

  it('runs every pod as a non-root user, with a read-only root filesystem and no privilege escalation', () => {
    for (const { owner, spec } of podTemplates) {
      expect(spec.securityContext?.runAsNonRoot, owner).toBe(true);
      expect(spec.securityContext?.runAsUser, owner).toBeGreaterThan(0);
    }
    for (const { owner, container } of containers) {
      expect(container.securityContext, `${owner} ${container.name}`).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
    }
  });

  it('sets CPU and memory requests and a memory limit on every container; the gateway’s heap fits under its limit', () => {
    for (const { owner, container } of containers) {
      expect(container.resources?.requests, `${owner} ${container.name}`).toMatchObject({
        cpu: expect.any(String),
        memory: expect.any(String),
      });
      expect(container.resources?.limits?.memory, `${owner} ${container.name}`).toEqual(expect.any(String));
    }
    const limitMiB = mebibytes(gateway!.resources!.limits!.memory!);
    const requestMiB = mebibytes(gateway!.resources!.requests!.memory!);
    // The image serves distinct 1000-record pages at 50 connections in 512 MiB (bench/image-memory.ts,
    // test/e2e/image-memory.test.ts runs it in the request); the limit leaves room above it.
    expect(requestMiB).toBeGreaterThanOrEqual(512);
    expect(limitMiB).toBeGreaterThanOrEqual(requestMiB);
    // The image's own command sizes the heap from the limit: a command or args here would replace it.
    expect(gateway!.command).toBeUndefined();
    expect(gateway!.args).toBeUndefined();
  });

  it('finds every Secret and ConfigMap a pod names, with every key it reads', () => {
    const missing: string[] = [];
    const has = (kind: 'Secret' | 'ConfigMap', name: string, key?: string) => {
      const object = find(kind, name)[0];
      if (!object) return void missing.push(`${kind} ${name}`);
      if (key !== undefined && !(key in { ...object.data, ...object.stringData }))
        missing.push(`${kind} ${name} key ${key}`);
    };
    for (const { spec } of podTemplates) {
      for (const container of spec.containers) {
        for (const variable of container.env ?? []) {
          const { secretKeyRef, configMapKeyRef } = variable.valueFrom ?? {};
          if (secretKeyRef) has('Secret', secretKeyRef.name, secretKeyRef.key);
          if (configMapKeyRef) has('ConfigMap', configMapKeyRef.name, configMapKeyRef.key);
        }
        for (const source of container.envFrom ?? []) {
          if (source.secretRef) has('Secret', source.secretRef.name);
          if (source.configMapRef) has('ConfigMap', source.configMapRef.name);
        }
      }
      for (const volume of spec.volumes ?? []) {
        if (volume.configMap) has('ConfigMap', volume.configMap.name);
        if (volume.secret) has('Secret', volume.secret.secretName);
      }
    }
    expect(missing).toEqual([]);
    expect(objects.filter((o) => o.kind === 'Secret' || o.kind === 'ConfigMap').length).toBeGreaterThanOrEqual(2);
  });

  it('reads REDIS_URL, the JWT secret, the operators’ token and every licensee’s key from the Secret, and LICENSEES_FILE from the ConfigMap', () => {
    const env = gateway!.env ?? [];
    const keyEnvs = licenseesOf(gateway!, objects).keyEnvs;
    expect(keyEnvs.length).toBeGreaterThan(0);
    for (const name of [...CREDENTIALS.filter((name) => env.some((v) => v.name === name)), ...keyEnvs]) {
      const variable = env.find((v) => v.name === name);
      expect(variable?.valueFrom?.secretKeyRef, name).toBeDefined();
    }
    for (const name of ['REDIS_URL', 'JWT_SECRET', 'OPS_TOKEN'])
      expect(
        env.some((v) => v.name === name && v.valueFrom?.secretKeyRef),
        name,
      ).toBe(true);
  });

  it('sets only variables the gateway’s settings accept (or a licensee’s keyEnv), and loadConfig accepts them together', () => {
    const { keyEnvs } = licenseesOf(gateway!, objects);
    expect(unacceptedVariables(gateway!.env ?? [], keyEnvs)).toEqual([]);
    const config = loadConfig(resolvedEnv(gateway!, objects));
    expect(config.host).toBe('0.0.0.0');
    expect(config).toMatchObject({ opsHost: '0.0.0.0', opsPort: 9464, opsToken: expect.any(String) });
    expect(config.upstreamBaseUrl).toMatch(/^https:\/\//);
    expect(config.redis?.url).toMatch(/^redis/);
    expect(config.licensees.map((licensee) => licensee.account.systemIdentifier)).toEqual(['1001', '2002']);
  });

  it('lets the pod’s own address in (Prometheus scrapes it) and the Service’s name, through ALLOWED_HOSTS', () => {
    const allowed = envOf(gateway!).ALLOWED_HOSTS?.split(',') ?? [];
    expect(allowed).toEqual(
      expect.arrayContaining(['$(POD_IP)', find('Service', deployment.metadata.name)[0]!.metadata.name]),
    );
  });

  it('has Prometheus scrape each pod’s operators’ port (the container port named ops, OPS_PORT) with OPS_TOKEN from the Secret', () => {
    const ops = gateway!.ports!.find((p) => p.name === 'ops');
    expect(ops, 'a container port named ops').toBeDefined();
    const env = envOf(gateway!);
    expect(String(ops!.containerPort)).toBe(env.OPS_PORT);
    expect(ops!.containerPort).not.toBe(gateway!.ports!.find((p) => p.name === 'http')!.containerPort);
    // Reachable at the pod's address, hence the token, which comes from the Secret.
    expect(env.OPS_HOST).toBe('0.0.0.0');
    expect(gateway!.env!.find((v) => v.name === 'OPS_TOKEN')?.valueFrom?.secretKeyRef).toMatchObject({
      key: 'ops-token',
    });
    const scrape = find('ConfigMap', 'reservation-gateway-prometheus')[0];
    expect(scrape, 'the ConfigMap holding the scrape job').toBeDefined();
    const [job, ...others] = parse(scrape!.data!['scrape-config.yml']!) as {
      job_name: string;
      metrics_path: string;
      authorization: { type: string; credentials_file?: string; credentials?: string };
      kubernetes_sd_configs: { role: string }[];
      relabel_configs: { source_labels: string[]; regex: string; action?: string }[];
    }[];
    expect(others).toEqual([]);
    expect(job!.job_name).toBe('reservation-gateway');
    expect(job!.metrics_path).toBe('/metrics');
    expect(job!.kubernetes_sd_configs).toEqual([{ role: 'pod' }]);
    expect(job!.authorization.type).toBe('Bearer');
    expect(job!.authorization.credentials_file ?? job!.authorization.credentials).toEqual(expect.any(String));
    const keeps = job!.relabel_configs.filter((rule) => rule.action === 'keep');
    // Only the container port named ops is a target: never the clients' port.
    expect(keeps).toContainEqual({
      source_labels: ['__meta_kubernetes_pod_container_port_name'],
      regex: 'ops',
      action: 'keep',
    });
    // And only the gateway's pods, by the labels of the Deployment's template.
    const labels = deployment.spec!.template!.metadata.labels;
    const podKeep = keeps.find((rule) =>
      rule.source_labels.every((l) => l.startsWith('__meta_kubernetes_pod_label_')),
    )!;
    const values = podKeep.source_labels.map((l) => {
      const name = Object.keys(labels).find(
        (key) => `__meta_kubernetes_pod_label_${key.replace(/[^a-zA-Z0-9_]/g, '_')}` === l,
      );
      return name === undefined ? '' : labels[name];
    });
    expect(new RegExp(`^(?:${podKeep.regex})$`).test(values.join(';'))).toBe(true);
    // The alert on a replica Prometheus cannot scrape watches this job.
    expect(readFileSync(join(ROOT, 'deploy/prometheus/alerts.yaml'), 'utf8')).toContain(`up{job="${job!.job_name}"}`);
  });

  it('does not expose the operators’ port through the Service (only the clients’ port)', () => {
    const ops = gateway!.ports!.find((p) => p.name === 'ops')!;
    for (const service of find('Service').filter((s) =>
      Object.entries((s.spec!.selector as Record<string, string>) ?? {}).every(
        ([key, value]) => deployment.spec!.template!.metadata.labels[key] === value,
      ),
    )) {
      const ports = service.spec!.ports as { name?: string; port: number; targetPort: string | number }[];
      expect(ports.length).toBeGreaterThan(0);
      for (const port of ports) {
        expect(port.targetPort, service.metadata.name).not.toBe('ops');
        expect(port.targetPort, service.metadata.name).not.toBe(ops.containerPort);
        expect(port.port, service.metadata.name).not.toBe(ops.containerPort);
        if (typeof port.targetPort === 'string')
          expect(gateway!.ports!.find((p) => p.name === port.targetPort)?.containerPort).not.toBe(ops.containerPort);
      }
    }
  });

  it('points the Service, PodDisruptionBudget and HorizontalPodAutoscaler at the gateway’s pods', () => {
    const labels = deployment.spec!.template!.metadata.labels;
    const service = find('Service', deployment.metadata.name)[0]!;
    expect(labels).toMatchObject(service.spec!.selector as Record<string, string>);
    expect(gateway!.ports!.map((p) => p.name)).toContain(
      (service.spec!.ports as { targetPort: string }[])[0]!.targetPort,
    );
    expect(labels).toMatchObject(
      (find('PodDisruptionBudget')[0]!.spec!.selector as { matchLabels: Record<string, string> }).matchLabels,
    );
    const hpa = find('HorizontalPodAutoscaler')[0]!.spec as {
      scaleTargetRef: { kind: string; name: string };
      minReplicas: number;
      maxReplicas: number;
      metrics: { resource: { name: string } }[];
    };
    expect(hpa.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: deployment.metadata.name });
    expect(hpa.minReplicas).toBe(3);
    expect(hpa.metrics.map((m) => m.resource.name)).toEqual(['cpu']);
    // While Redis is away each replica sends its fallback share of the budget: all of them together at most the whole.
    expect(loadConfig(resolvedEnv(gateway!, objects)).redis!.fallbackShare * hpa.maxReplicas).toBeLessThanOrEqual(1);
  });
});

describe('deploy/compose.yaml', () => {
  const compose = parse(readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<
      string,
      {
        image?: string;
        command?: string[];
        environment?: Record<string, string>;
        secrets?: string[];
        volumes?: string[];
      }
    >;
    secrets: Record<string, { environment?: string; file?: string }>;
  };
  // As `docker compose` fills in ${…} from the shell (the one required variable, the operators' token).
  const shell = { OPS_TOKEN: 'a'.repeat(64) };
  const gateways = Object.entries(compose.services).filter(
    ([, service]) => service.image?.startsWith(`${GATEWAY_IMAGE}:`) && !service.command,
  );
  const envOfService = (environment: Record<string, string>) =>
    Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, interpolate(String(value), shell)]));

  it('runs three gateway replicas, a load balancer over them, Redis, the emulator and Prometheus', () => {
    expect(gateways.map(([name]) => name)).toEqual(['gateway-1', 'gateway-2', 'gateway-3']);
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(['loadbalancer', 'redis', 'emulator', 'prometheus']),
    );
    const nginx = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8');
    const upstreams = [...nginx.matchAll(/^\s*server\s+([\w.-]+:\d+);/gm)].map((m) => m[1]);
    expect(upstreams).toEqual(gateways.map(([name, service]) => `${name}:${envOfService(service.environment!).PORT}`));
  });

  it('sets only variables the gateway’s settings accept, and loadConfig accepts them together', () => {
    for (const [name, service] of gateways) {
      const env = envOfService(service.environment!);
      expect(
        unacceptedVariables(
          Object.keys(env).map((variable) => ({ name: variable, value: env[variable] })),
          [],
        ),
        name,
      ).toEqual([]);
      const config = loadConfig(env);
      expect(config.upstreamBaseUrl).toBe('http://emulator:4010');
      expect(config.redis?.url).toBe('redis://redis:6379/0');
    }
  });

  it('has Prometheus scrape each replica’s operators’ port (OPS_PORT, never PORT) by its name, with the OPS_TOKEN the replicas have as its bearer', () => {
    const prometheus = parse(readFileSync(join(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      scrape_configs: {
        metrics_path: string;
        authorization: { type: string; credentials_file: string };
        static_configs: { targets: string[] }[];
      }[];
    };
    const [job] = prometheus.scrape_configs;
    expect(job!.metrics_path).toBe('/metrics');
    const targets = job!.static_configs.flatMap((c) => c.targets);
    for (const [name, service] of gateways) {
      const env = envOfService(service.environment!);
      expect(targets).toContain(`${name}:${env.OPS_PORT}`);
      expect(targets).not.toContain(`${name}:${env.PORT}`);
      // Reachable on the compose network, so the token is required there.
      expect(loadConfig(env)).toMatchObject({ opsHost: '0.0.0.0', opsToken: shell.OPS_TOKEN });
      expect(env.OPS_PORT).not.toBe(env.PORT);
      expect(env.ALLOWED_HOSTS?.split(',')).toEqual(expect.arrayContaining([name, 'localhost']));
      expect(env.OPS_TOKEN).toBe(shell.OPS_TOKEN);
    }
    // Prometheus reaches the replicas on the compose network only: the operators' port is published to no host.
    for (const [name] of gateways)
      expect((compose.services[name] as { ports?: string[] }).ports ?? [], name).toEqual([]);
    const secret = Object.entries(compose.secrets).find(([, source]) => source.environment === 'OPS_TOKEN')?.[0];
    expect(compose.services.prometheus!.secrets).toContain(secret);
    expect(job!.authorization).toEqual({ type: 'Bearer', credentials_file: `/run/secrets/${secret}` });
    // The rules file sits beside prometheus.yml in the container as in deploy/prometheus.
    const mounts = compose.services.prometheus!.volumes!.map((volume) => volume.split(':').slice(0, 2));
    for (const rules of prometheus.rule_files)
      expect(mounts).toContainEqual([`./prometheus/${rules}`, posix.join('/etc/prometheus', rules)]);
  });
});

function render(kubectlPath: string): K8sObject[] {
  const rendered = spawnSync(kubectlPath, ['kustomize', join(ROOT, 'deploy/kubernetes')], { encoding: 'utf8' });
  if (rendered.status !== 0) throw new Error(`kubectl kustomize deploy/kubernetes failed:\n${rendered.stderr}`);
  return parseAllDocuments(rendered.stdout)
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

/** The container's plain values by name (no Secret read). */
function envOf(container: Container): Record<string, string | undefined> {
  return Object.fromEntries((container.env ?? []).map((variable) => [variable.name, variable.value]));
}

function secretValue(objects: readonly K8sObject[], ref: KeyRef): string {
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name)!;
  return secret.stringData?.[ref.key] ?? Buffer.from(secret.data![ref.key]!, 'base64').toString('utf8');
}

/** The ConfigMap entry mounted at LICENSEES_FILE's path, and the keyEnv each licensee names. */
function licenseesOf(container: Container, objects: readonly K8sObject[]): { text: string; keyEnvs: string[] } {
  const path = envOf(container).LICENSEES_FILE!;
  const mount = container.volumeMounts!.find((m) => posix.dirname(path) === m.mountPath)!;
  const deployment = objects.find((o) => o.spec?.template?.spec.containers.includes(container))!;
  const volume = deployment.spec!.template!.spec.volumes!.find((v) => v.name === mount.name)!;
  const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === volume.configMap!.name)!;
  const text = configMap.data![posix.basename(path)]!;
  const file = JSON.parse(text) as { licensees: { keyEnv?: string }[] };
  return { text, keyEnvs: file.licensees.flatMap((licensee) => (licensee.keyEnv ? [licensee.keyEnv] : [])) };
}

/**
 * The container's environment as the pod would have it: Secret values, the downward API's
 * samples, `$(NAME)` expanded, and LICENSEES_FILE written out where this test can read it.
 */
function resolvedEnv(container: Container, objects: readonly K8sObject[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const { secretKeyRef, fieldRef } = variable.valueFrom ?? {};
    if (variable.value !== undefined)
      env[variable.name] = variable.value.replace(/\$\((\w+)\)/g, (whole, name: string) => env[name] ?? whole);
    else if (secretKeyRef) env[variable.name] = secretValue(objects, secretKeyRef);
    else if (fieldRef) env[variable.name] = FIELD_SAMPLES[fieldRef.fieldPath] ?? '';
  }
  const licensees = join(scratch, 'licensees.json');
  writeFileSync(licensees, licenseesOf(container, objects).text);
  return { ...env, LICENSEES_FILE: licensees };
}

/** Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?message}`. */
function interpolate(value: string, shell: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_whole, name: string, kind?: string, rest?: string) => {
    const set = shell[name];
    if (set) return set;
    if (kind === '?') throw new Error(`compose requires ${name}: ${rest}`);
    return kind === '-' ? (rest ?? '') : '';
  });
}

/** A Kubernetes memory quantity in MiB. */
function mebibytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(quantity);
  if (!m) throw new Error(`not a memory quantity: ${quantity}`);
  const factor =
    { Ki: 1 / 1024, Mi: 1, Gi: 1024, K: 1000 / 1048576, M: 1e6 / 1048576, G: 1e9 / 1048576 }[m[2] ?? ''] ?? 1 / 1048576;
  return Number(m[1]) * factor;
}
