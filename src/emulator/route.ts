import type { EmulatorClock } from './clock.ts';
import type { Licensee } from './model.ts';
import type { ParamSpecs, Params } from './params.ts';
import type { Store } from './store.ts';

export type Version = 'v1' | 'v101' | 'v102';

export interface HandlerContext {
  store: Store;
  licensee: Licensee;
  params: Params;
  clock: EmulatorClock;
  /** Where the emulator is reached, for the links it hands out. */
  baseUrl: string;
}

export interface Route {
  name: string;
  /** The versions that serve it (docs/architecture.md, "Endpoint table and versions"). */
  versions: readonly Version[];
  params: ParamSpecs;
  /** Property name used when the wrapped-arrays variation wraps this endpoint's list. */
  listName?: string;
  /** The endpoint answers a page count (bare-integer variation). */
  pageCount?: boolean;
  handle(ctx: HandlerContext): unknown;
}

export const PAGE_SIZE = 1000;

export const ALL: readonly Version[] = ['v1', 'v101', 'v102'];
export const V101_UP: readonly Version[] = ['v101', 'v102'];
export const V102: readonly Version[] = ['v102'];
export const LINKS: readonly Version[] = ['v1', 'v101'];

export function page<T>(items: T[], pageNumber: number): T[] {
  return items.slice((pageNumber - 1) * PAGE_SIZE, pageNumber * PAGE_SIZE);
}

export function pageCount(total: number): { pageCount: number } {
  return { pageCount: Math.ceil(total / PAGE_SIZE) };
}
