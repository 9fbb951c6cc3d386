// Turns a zod failure on a body or query into the contract's error: one problem, with its param.
import type { z } from 'zod';
import { invalid, missing, unknownParam } from '../errors';

export function parseInput<S extends z.ZodType>(schema: S, input: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const unknown = result.error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys') throw unknownParam(unknown.keys[0]);
  const issue = result.error.issues[0];
  const param = issue.path.length ? String(issue.path[0]) : undefined;
  if (param !== undefined && !Object.hasOwn(input, param)) throw missing(param);
  throw invalid(param, param ? `${param} ${issue.message}` : issue.message);
}
