import { z } from 'zod';

/** Injected failures (the control surface: docs/upstream.md, "The emulator"), drawn from a seeded sequence. */
export const faultRuleSchema = z.strictObject({
  /** Endpoint name, or "*" / absent for all. */
  endpoint: z.string().default('*'),
  latencyMs: z.number().int().min(0).max(60_000).default(0),
  errorRate: z.number().min(0).max(1).default(0),
  errorStatus: z.union([z.literal(500), z.literal(502), z.literal(503)]).default(503),
  resetRate: z.number().min(0).max(1).default(0),
  malformedRate: z.number().min(0).max(1).default(0),
  rateLimitRate: z.number().min(0).max(1).default(0),
});
export const faultsSchema = z.strictObject({
  rules: z.array(faultRuleSchema).default([]),
  seed: z.number().int().optional(),
});

export type FaultRule = z.infer<typeof faultRuleSchema>;
export type FaultKind = 'reset' | 'status' | 'malformed' | '429';

export interface FaultDraw {
  latencyMs: number;
  kind: FaultKind | null;
  errorStatus: number;
}

export class Faults {
  private rules: FaultRule[] = [];
  private random: () => number;

  constructor(private readonly defaultSeed: number) {
    this.random = mulberry32(defaultSeed);
  }

  set(config: z.infer<typeof faultsSchema>): void {
    this.rules = config.rules;
    this.random = mulberry32(config.seed ?? this.defaultSeed);
  }

  clear(): void {
    this.set({ rules: [] });
  }

  /** One draw per request: rates of a rule add up, so 30 % errors and 5 % resets are exclusive. */
  draw(endpoint: string): FaultDraw | null {
    const rule = this.rules.find((r) => r.endpoint === endpoint) ?? this.rules.find((r) => r.endpoint === '*');
    if (!rule) return null;
    const x = this.random();
    let edge = 0;
    let kind: FaultKind | null = null;
    for (const [k, rate] of [
      ['reset', rule.resetRate],
      ['status', rule.errorRate],
      ['malformed', rule.malformedRate],
      ['429', rule.rateLimitRate],
    ] as const) {
      edge += rate;
      if (x < edge) {
        kind = k;
        break;
      }
    }
    return { latencyMs: rule.latencyMs, kind, errorStatus: rule.errorStatus };
  }
}

/** A small seeded PRNG: the same seed gives the same fault sequence every run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
