import { setFlagsFromString } from 'node:v8';

/**
 * Imported by main.ts before the gateway's modules: while they load, build the schema and start
 * listening, V8's young generation is kept at its initial 1 MiB semi-spaces instead of doubling up to
 * 16 MiB (V8 reads `--semi-space-growth-factor` each time it would grow them; the size flags
 * themselves only count at start). Start-up allocates tens of MiB of short-lived objects, and
 * otherwise leaves 32 MiB of young generation committed until V8's memory reducer runs after some
 * 30 s idle: about 25 MiB of the idle RSS right after ready (docs/benchmarks.md). Once ready,
 * `youngGenerationMayGrow()` gives V8 its default back: under load the young generation grows again,
 * where fewer scavenges and less premature promotion are worth its memory.
 */
setFlagsFromString('--semi-space-growth-factor=1');

export function youngGenerationMayGrow(): void {
  setFlagsFromString('--semi-space-growth-factor=2');
}
