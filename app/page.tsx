// Placeholder home page: the real UI arrives with the PWA issue.
export default function HomePage() {
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', padding: '1.5rem', maxWidth: '40rem' }}>
      <h1>Parley</h1>
      <p>
        The <code>/v1</code> service is running. See <a href="/v1/openapi.json">/v1/openapi.json</a> for
        the interface; the app itself is on its way.
      </p>
    </main>
  );
}
