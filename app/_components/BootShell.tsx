// What the page shows until the app knows who is here (lib/view/boot-view.ts): the same frame the
// screen it opens into has — the signed-in shell (with the list's heading when the route is the
// list), the sign-in page's head, or a plain "Loading…" before a lock screen — so its largest
// element is painted from the HTML, not after every script. A server component (no client code:
// the first-load JS does not carry it), handed to the app as markup (page.tsx); the CSS
// (globals.css, "boot") shows the part <html data-boot> names. The app shows it again while a
// signed-in session's connection opens.
export function BootShell() {
  return (
    <div className="boot">
      <div className="shell boot-signed-in" aria-busy="true">
        <header className="topbar">
          <span className="brand">Parley</span>
          <nav aria-label="Main">
            <a href="/">Conversations</a>
            <a href="/?view=files">Files</a>
            <a href="/?view=device">Device</a>
          </nav>
        </header>
        <main>
          <section className="screen list-screen boot-list" aria-labelledby="boot-title">
            <div className="screen-head">
              <h1 id="boot-title">Conversations</h1>
            </div>
          </section>
          <p className="empty">Loading…</p>
        </main>
      </div>
      <main className="signin boot-signin" aria-busy="true">
        <h1>Parley</h1>
        <p>Conversations and files, on your phone, with or without a network.</p>
        <p className="empty">Loading…</p>
      </main>
      <p className="empty boot-plain">Loading…</p>
    </div>
  );
}
