import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { parse } from 'yaml';
import { run } from './run.ts';

/**
 * What the tests that build and run the image share (test/e2e/image.test.ts, image-memory.test.ts):
 * the image is built from the Dockerfile unchanged (scripts/image/build.sh: podman, over the stand-in
 * base of scripts/image/base.sh where no registry of images is reachable). Without podman (or as a
 * user other than root) a user's run skips them, saying why; CI (REQUIRE_PODMAN=1, set by .ci/run)
 * fails instead.
 */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const IMAGE = process.env.GATEWAY_IMAGE ?? 'localhost/reservation-gateway:ci';
/** What scripts/image/build.sh passes: containers here need explicit limits. */
export const LIMITS = ['--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=4096'];

/** A program run to its end in the repository's folder. */
export const inRoot = (command: string, args: string[]) => run(command, args, { cwd: ROOT });
/** podman with the runtime that works on these machines (crun refuses mixed cgroup mounts). */
export const podman = (...args: string[]) => inRoot('podman', ['--runtime', 'runc', ...args]);

/** Why the image cannot be built and run here; undefined when it can. */
export async function unavailable(): Promise<string | undefined> {
  const version = await inRoot('podman', ['--version']).catch((error: Error) => ({
    code: 1,
    stdout: '',
    stderr: error.message,
  }));
  if (version.code !== 0) return `podman is not installed (${version.stderr.trim()})`;
  if (process.getuid?.() !== 0) return 'podman builds here as root only (the stand-in base needs debootstrap)';
  return undefined;
}

/**
 * For a test file's beforeAll: builds the image (from podman's cache when .ci/run has built it
 * already) and returns undefined, or returns why it cannot, having said so (`what`: the tests it
 * skips). Throws instead under REQUIRE_PODMAN=1.
 */
export async function buildImageOrSkip(what: string): Promise<string | undefined> {
  const skipped = await unavailable();
  if (skipped) {
    if (process.env.REQUIRE_PODMAN === '1') throw new Error(`REQUIRE_PODMAN=1 but ${skipped}`);
    console.warn(`Skipping ${what}: ${skipped} (REQUIRE_PODMAN=1 makes this a failure)`);
    return skipped;
  }
  // Cached: .ci/run has built it already, and podman reuses every layer nothing changed under.
  const build = await inRoot('sh', ['scripts/image/build.sh', IMAGE]);
  expect(build.code, build.stderr.slice(-3000)).toBe(0);
  return undefined;
}
/** A first build: a debootstrap and two `npm ci`, minutes on a busy machine. */
export const BUILD_TIMEOUT_MS = 1_200_000;

/** A container's logs, stdout and stderr together. */
export async function logsOf(container: string): Promise<string> {
  const result = await podman('logs', container);
  return result.stdout + result.stderr;
}

/** Waits for the gateway in `container` to say it is ready; its GraphQL URL on the host's published port. */
export async function readyUrl(container: string, timeout = 60_000): Promise<string> {
  await expect.poll(() => logsOf(container), { timeout, interval: 250 }).toMatch(/ready at http:\/\/\S+\/graphql/);
  const port = await podman('port', container, '4000');
  expect(port.code, port.stderr).toBe(0);
  return `http://127.0.0.1:${/:(\d+)\s*$/.exec(port.stdout)![1]}/graphql`;
}

/** The gateway's container in deploy/kubernetes/deployment.yaml, as written (not rendered). */
export interface DeployedGateway {
  terminationGracePeriodSeconds: number;
  resources: { requests: { cpu: string; memory: string }; limits: { memory: string } };
  args?: string[];
}

export function deployedGateway(): DeployedGateway {
  const deployment = parse(readFileSync(join(ROOT, 'deploy/kubernetes/deployment.yaml'), 'utf8')) as {
    spec: {
      template: {
        spec: {
          terminationGracePeriodSeconds: number;
          containers: (Omit<DeployedGateway, 'terminationGracePeriodSeconds'> & { name: string })[];
        };
      };
    };
  };
  const pod = deployment.spec.template.spec;
  const container = pod.containers.find((c) => c.name === 'gateway')!;
  return { ...container, terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds };
}

/** A Kubernetes memory quantity (Mi, Gi, M, G or bytes) in bytes. */
export function quantityBytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(quantity);
  if (!m) throw new Error(`not a memory quantity: ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return Math.round(Number(m[1]) * unit);
}
