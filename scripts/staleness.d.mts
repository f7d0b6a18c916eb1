/** Types of staleness.mjs, for the tests that import it. */
export interface BuildStamp {
  newestSourceMs: number;
}
export declare const BUILD_INPUTS: readonly string[];
export declare const STAMP_FILE: string;
export declare function isStale(newestSourceMs: number, stamp: BuildStamp | undefined): boolean;
export declare function newestSourceMtime(root: string, inputs?: readonly string[]): number;
export declare function readStamp(outDir: string): BuildStamp | undefined;
