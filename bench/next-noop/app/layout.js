// The root layout the app router requires (the floor pages'; the /noop route handler has none).
export const metadata = { title: 'Parley bench floor' };
export const viewport = { width: 'device-width', initialScale: 1 };

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
