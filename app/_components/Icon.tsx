// A handful of inline SVG icons (no icon font: nothing to download, nothing missing offline).
const PATHS = {
  pin: 'M14 3l7 7-3 1-4 4 1 5-2 1-4-5-5 5-1-1 5-5-5-4 1-2 5 1 4-4z',
  bell: 'M12 3a6 6 0 0 0-6 6v4l-2 3h16l-2-3V9a6 6 0 0 0-6-6zm-2 15a2 2 0 0 0 4 0',
  mute: 'M4 4l16 16M12 3a6 6 0 0 0-6 6v4l-2 3h12M18 13V9a6 6 0 0 0-3-5.2M10 18a2 2 0 0 0 4 0',
  archive: 'M3 4h18v4H3zM5 8v11h14V8M10 12h4',
  restore: 'M3 4h18v4H3zM5 8v11h14V8M12 17v-6m-3 3l3-3 3 3',
  trash: 'M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6',
  upload: 'M12 16V4m-5 5l5-5 5 5M4 16v4h16v-4',
  download: 'M12 4v12m-5-5l5 5 5-5M4 16v4h16v-4',
  camera: 'M4 7h4l2-3h4l2 3h4v12H4zM12 17a4 4 0 1 0 0-8 4 4 0 0 0 0 8',
  back: 'M15 5l-7 7 7 7',
  plus: 'M12 5v14M5 12h14',
  edit: 'M4 20h4L19 9l-4-4L4 16zM14 6l4 4',
  file: 'M6 3h8l4 4v14H6zM14 3v4h4',
  sync: 'M4 12a8 8 0 0 1 14-5l2 2M20 12a8 8 0 0 1-14 5l-2-2M20 4v5h-5M4 20v-5h5',
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name, size = 20 }: { name: IconName; size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" strokeLinejoin="round">
      <path d={PATHS[name]} />
    </svg>
  );
}
