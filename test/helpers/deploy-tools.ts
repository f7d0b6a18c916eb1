import { programOrSkip, type SystemProgram } from './system-program.ts';

/**
 * The programs the deploy/ tests run: kubectl (its `kustomize` renders deploy/kubernetes) and
 * promtool (checks and unit-tests the alert rules). A user's `npm test` skips those tests without
 * them, saying how to install them; .ci/run installs both and sets REQUIRE_KUBECTL=1 and
 * REQUIRE_PROMTOOL=1, so that there a missing one fails.
 */
export const KUBECTL_INSTALL_HINT =
  'no kubectl found: set KUBECTL_PATH, or install it (Debian/Ubuntu: `apt-get install kubernetes-client`)';
export const PROMTOOL_INSTALL_HINT =
  'no promtool found: set PROMTOOL_PATH, or install it (Debian/Ubuntu: `apt-get install prometheus`, or only unpack it: `apt-get download prometheus && dpkg -x prometheus_*.deb DIR`, then PROMTOOL_PATH=DIR/usr/bin/promtool)';

const KUBECTL: SystemProgram = {
  tests: 'Kubernetes manifest',
  pathVariable: 'KUBECTL_PATH',
  names: ['kubectl'],
  requireVariable: 'REQUIRE_KUBECTL',
  installHint: KUBECTL_INSTALL_HINT,
};
const PROMTOOL: SystemProgram = {
  tests: 'promtool',
  pathVariable: 'PROMTOOL_PATH',
  names: ['promtool'],
  requireVariable: 'REQUIRE_PROMTOOL',
  installHint: PROMTOOL_INSTALL_HINT,
};

export const kubectlOrSkip = (env: Record<string, string | undefined> = process.env) => programOrSkip(KUBECTL, env);
export const promtoolOrSkip = (env: Record<string, string | undefined> = process.env) => programOrSkip(PROMTOOL, env);
