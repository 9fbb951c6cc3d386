// The reference: a no-op Next.js route handler (constant JSON, no work). Plain JS so the root
// tsconfig (which includes **/*.ts) never type-checks this throwaway app.
export const dynamic = 'force-dynamic';

const BODY = JSON.stringify({ ok: true });

export function GET() {
  return new Response(BODY, { headers: { 'content-type': 'application/json' } });
}
