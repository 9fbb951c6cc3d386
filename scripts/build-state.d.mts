// Types for build-state.mjs (plain JavaScript, so that `npm start` runs with plain node).
export interface BuildStamp {
  digest: string;
  nextBuildId: string | null;
  builtAt: string;
}
export const SOURCES: string[];
export const GENERATED: Set<string>;
export const OUTPUT_DIR: string;
export const STAMP: string;
export const SERVER_BUNDLE: string;
export function sourcesDigest(root: string): string;
export function readStamp(root: string): BuildStamp | null;
export function readNextBuildId(root: string): string | null;
export function writeStamp(root: string, digest: string): BuildStamp;
export function removeStamp(root: string): void;
export function buildState(root: string): { current: true; stamp: BuildStamp } | { current: false; reason: string };
