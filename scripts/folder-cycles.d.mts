// Types for folder-cycles.mjs (plain JavaScript, run by `npm run lint` with plain node).
export const LAYERS: Record<string, string[]>;
export function resolveImport(root: string, fromFile: string, specifier: string): string | null;
export function folderGraph(root: string, dirs?: string[]): Map<string, Map<string, string[]>>;
export function findCycles(graph: Map<string, Map<string, string[]>>): string[][];
export function layerViolations(
  graph: Map<string, Map<string, string[]>>,
  layers?: Record<string, string[]>,
): { from: string; to: string; imports: string[] }[];
export function report(root: string, dirs: string[], layers?: Record<string, string[]>): string[];
