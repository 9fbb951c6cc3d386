// Checks real requests and answers against the OpenAPI document with a standard JSON Schema
// validator (ajv, draft 2020-12, with formats): the operation exists, its parameters and body are
// the document's, the status is declared, the body is valid against its schema, and the headers
// the answer carries are declared (and valid) for that status.
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export interface SentRequest {
  method: string;
  /** The path with its query, e.g. /v1/conversations?limit=5. */
  target: string;
  headers: Record<string, string>;
  /** The body's fields (JSON value, form or multipart fields; a file part as a string), or bytes. */
  body?: { type: string; value: unknown };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** Headers of an answer that the document must declare wherever they appear. */
const NOTABLE_HEADERS = [
  'www-authenticate',
  'allow',
  'retry-after',
  'idempotent-replayed',
  'idempotency',
  'location',
  'tus-resumable',
  'tus-version',
  'tus-extension',
  'tus-max-size',
  'upload-offset',
  'upload-length',
  'upload-expires',
  'upload-file-id',
  'preference-applied',
];

export class OpenApiChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  /** Header values are strings: an integer header is checked as one. */
  private readonly headerAjv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, coerceTypes: true });
  private readonly templates: { template: string; pattern: RegExp; names: string[] }[];
  /** Operations met so far, as "GET /v1/conversations/{id}". */
  readonly seen = new Set<string>();

  constructor(readonly doc: any) {
    for (const ajv of [this.ajv, this.headerAjv]) {
      addFormats(ajv);
      ajv.addSchema({ components: doc.components }, 'doc');
    }
    this.templates = Object.keys(doc.paths).map((template) => {
      const names: string[] = [];
      const source = template.replace(/\{([^}]+)\}/g, (_m, name: string) => (names.push(name), '([^/]*)'));
      return { template, pattern: new RegExp(`^${source}/?$`), names };
    });
  }

  /** Every operation of the document, as "METHOD /path". */
  operations(): string[] {
    return Object.entries(this.doc.paths).flatMap(([path, item]: [string, any]) =>
      Object.keys(item).filter((k) => k !== 'parameters').map((m) => `${m.toUpperCase()} ${path}`),
    );
  }

  private validate(schema: unknown, value: unknown, ajv = this.ajv): string | null {
    const validator = ajv.compile(withDocRefs(schema) as object);
    return validator(value) ? null : ajv.errorsText(validator.errors);
  }

  private locate(request: SentRequest) {
    const url = new URL(request.target, 'http://x');
    for (const { template, pattern, names } of this.templates) {
      const m = pattern.exec(url.pathname);
      if (!m) continue;
      const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
      return { template, params, query: url.searchParams };
    }
    throw new Error(`${request.method} ${request.target}: no path of the document matches`);
  }

  /** The problems of the request in the document's eyes ([] when it is one the document describes). */
  requestProblems(request: SentRequest, operationOf?: string): string[] {
    const { template, params, query } = this.locate(request);
    const operation = this.doc.paths[template][(operationOf ?? request.method).toLowerCase()];
    if (!operation) return [`${request.method} ${template} is not documented`];
    const problems: string[] = [];
    const declared = operation.parameters ?? [];
    const given = (p: any): string | null =>
      p.in === 'path' ? (params[p.name] ?? null) : p.in === 'query' ? query.get(p.name) : headerOf(request.headers, p.name);
    for (const p of declared) {
      const value = given(p);
      if (value === null) {
        if (p.required) problems.push(`${p.in} parameter ${p.name} is required`);
        continue;
      }
      const problem = this.validate(p.schema, value);
      if (problem) problems.push(`${p.in} parameter ${p.name}: ${problem}`);
    }
    for (const name of new Set(query.keys())) {
      if (!declared.some((p: any) => p.in === 'query' && p.name === name)) problems.push(`query parameter ${name} is not declared`);
      if (query.getAll(name).length > 1) problems.push(`query parameter ${name} is given more than once`);
    }
    const body = operation.requestBody;
    if (request.body === undefined) {
      if (body?.required) problems.push('a body is required');
    } else if (!body) {
      problems.push('the operation takes no body');
    } else {
      const media = body.content[request.body.type];
      if (!media) problems.push(`the body's type ${request.body.type} is not declared`);
      else if (media.schema?.format !== 'binary') {
        const problem = this.validate(media.schema, request.body.value);
        if (problem) problems.push(`body: ${problem}`);
      }
    }
    return problems;
  }

  /**
   * Checks a real answer to `request` (answered by the operation `operationOf`, when the method is
   * not one of the path's own: a 405). Returns its problems.
   */
  answerProblems(request: SentRequest, answer: Answer, operationOf?: string): string[] {
    const { template } = this.locate(request);
    const method = (operationOf ?? request.method).toLowerCase();
    const operation = this.doc.paths[template][method];
    if (!operation) return [`${method.toUpperCase()} ${template} is not documented`];
    this.seen.add(`${method.toUpperCase()} ${template}`);
    const response = operation.responses[String(answer.status)];
    if (!response) return [`${method.toUpperCase()} ${template} does not declare ${answer.status}`];
    const problems: string[] = [];
    const headers = resolveHeaders(this.doc, response.headers ?? {});
    for (const name of NOTABLE_HEADERS) {
      const value = answer.headers.get(name);
      if (value === null) continue;
      const declared = headers.get(name);
      if (!declared) problems.push(`${answer.status}: header ${name} is sent but not declared`);
      else if (declared.schema) {
        const problem = this.validate(declared.schema, value, this.headerAjv);
        if (problem) problems.push(`${answer.status}: header ${name}: ${problem}`);
      }
    }
    for (const [name, declared] of headers) {
      if (declared.required && answer.headers.get(name) === null) problems.push(`${answer.status}: required header ${name} is missing`);
    }
    const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (!response.content || request.method === 'HEAD') {
      if (answer.text !== '') problems.push(`${answer.status}: a body where none is declared`);
      return problems;
    }
    if (answer.text === '' && answer.status !== 201) return [...problems, `${answer.status}: no body where one is declared`];
    if (answer.text === '') return problems; // tus creation: the body is the file only when asked for it
    const media = response.content[type];
    if (!media) return [...problems, `${answer.status}: content type ${type} is not declared`];
    if (type === 'application/json') {
      const problem = this.validate(media.schema, JSON.parse(answer.text));
      if (problem) problems.push(`${answer.status}: body: ${problem}`);
    }
    return problems;
  }
}

/** Local $refs of the document, made to point into the schema registered as "doc". */
function withDocRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withDocRefs);
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `doc${v}` : withDocRefs(v)]),
    );
  }
  return node;
}

function resolveHeaders(doc: any, headers: Record<string, any>): Map<string, any> {
  const resolved = new Map<string, any>();
  for (const [name, header] of Object.entries(headers)) {
    const target = header.$ref ? doc.components.headers[header.$ref.split('/').pop()] : header;
    resolved.set(name.toLowerCase(), target);
  }
  return resolved;
}

function headerOf(headers: Record<string, string>, name: string): string | null {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? null : headers[key]!;
}
