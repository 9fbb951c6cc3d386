'use client';
// Whether a value has stayed the same for `delayMs`: the search's pass for typos (a read of the
// rows, lib/view/windows.ts) waits for typing to pause rather than running on every keystroke.
import { useEffect, useState } from 'react';

export function useSettled<T>(value: T, delayMs: number): boolean {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(() => value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return Object.is(settled, value);
}
