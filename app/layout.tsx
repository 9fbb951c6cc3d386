import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';
import { bootScript } from '@/lib/view/boot-view';
import { LOCK_KEY, TOKEN_KEY } from '@/lib/view/lock/device-lock';
import './globals.css';

export const metadata: Metadata = {
  title: 'Parley',
  description: 'Conversations and clinical files, offline-first',
  manifest: '/manifest.webmanifest',
  icons: { icon: '/icons/icon-192.png', apple: '/icons/apple-touch-icon.png' },
  appleWebApp: { capable: true, title: 'Parley', statusBarStyle: 'default' },
};

export const viewport: Viewport = {
  width: 'device-width',
  initialScale: 1,
  viewportFit: 'cover',
  // The browser's bar follows the page's palette (app/globals.css).
  themeColor: [
    { media: '(prefers-color-scheme: light)', color: '#0b5cad' },
    { media: '(prefers-color-scheme: dark)', color: '#121417' },
  ],
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    // data-boot is the inline script's (boot-view.ts), set before React hydrates.
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* Chooses what the page shows before its scripts run (BootShell): first, so no paint comes before it. */}
        <script dangerouslySetInnerHTML={{ __html: bootScript({ token: TOKEN_KEY, lock: LOCK_KEY }) }} />
      </head>
      <body>{children}</body>
    </html>
  );
}
