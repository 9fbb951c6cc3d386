// Finds a request's route in the table: first the path (by template), then the method.
import type { z } from 'zod';
import { ID_PATTERN } from '../../name-rules';
import { Id } from '../../objects';
import type { Route } from './route';

interface PathEntry {
  template: string;
  segments: string[];
  routes: Route[];
  /** The path's parameters checked here (a route with `missing`): whether they pass their schema, and what a failing one is. */
  check: ((params: Record<string, string>) => boolean) | null;
  missing: string | null;
}

export interface PathMatch {
  /** The matched path template, as the table writes it (`/v1/files/{id}`). */
  template: string;
  /** Every route of the matched path, in table order. */
  routes: Route[];
  params: Record<string, string>;
  /** A parameter failed its schema: the missing resource to answer with (404), before the method is looked at. */
  missing: string | null;
}

export class Router {
  private readonly paths: PathEntry[] = [];

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      let entry = this.paths.find((p) => p.template === route.path);
      if (!entry) this.paths.push((entry = { template: route.path, segments: route.path.split('/'), routes: [], check: null, missing: null }));
      entry.routes.push(route);
      if (route.missing && route.params && !entry.missing) {
        entry.missing = route.missing;
        entry.check = paramsCheck(route.params, entry.segments);
      }
    }
  }

  /** The path's routes and parameters; null when no template matches. `path` has no trailing slash. */
  find(path: string): PathMatch | null {
    const segments = path.split('/');
    for (const entry of this.paths) {
      if (entry.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      const matches = entry.segments.every((template, i) => {
        const segment = segments[i];
        if (template.startsWith('{')) {
          params[template.slice(1, -1)] = segment; // even '': its schema refuses it (404 of the resource)
          return true;
        }
        return template === segment;
      });
      if (!matches) continue;
      const failed = entry.check !== null && !entry.check(params);
      return { template: entry.template, routes: entry.routes, params, missing: failed ? entry.missing : null };
    }
    return null;
  }
}

/**
 * Whether a path's parameters pass `schema`. A path whose one parameter is `{id}`, checked by
 * `{ id: Id }` (every such path in the table), is tested with Id's own pattern: the same answer
 * as the parse, without one per request.
 */
function paramsCheck(schema: z.ZodObject, segments: string[]): (params: Record<string, string>) => boolean {
  const names = Object.keys(schema.shape);
  const parameters = segments.filter((segment) => segment.startsWith('{'));
  if (names.length === 1 && schema.shape.id === Id && parameters.length === 1 && parameters[0] === '{id}') {
    return (params) => ID_PATTERN.test(params.id ?? '');
  }
  return (params) => schema.safeParse(params).success;
}

/** The route of `method` among a path's routes (else its `*` route), or null. */
export function routeFor(routes: readonly Route[], method: string): Route | null {
  return routes.find((r) => r.method === method) ?? routes.find((r) => r.method === '*') ?? null;
}

/** The methods a path takes, for Allow. */
export function allowed(routes: readonly Route[]): string[] {
  return routes.filter((r) => r.method !== '*').map((r) => r.method);
}
