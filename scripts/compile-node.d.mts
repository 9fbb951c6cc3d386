// Types for compile-node.mjs (plain JavaScript, so that the build runs it with plain node).
export function compileNodeEntry(source: string, outfile: string, options?: { sourcemap?: boolean }): Promise<void>;
