// A worker that handles its messages one at a time, to the end of each (the PDF thumbnails: pdf.js refuses a document while the last is destroyed).
import { describe, expect, it } from 'vitest';
import { oneAtATime } from '../../lib/view/viewer/one-at-a-time';

describe('oneAtATime', () => {
  it('starts a message only once the one before has finished, its cleanup included', async () => {
    const steps: string[] = [];
    let finishCleanup!: () => void;
    const cleanup = new Promise<void>((resolve) => (finishCleanup = resolve));
    const handle = oneAtATime(async (name: string) => {
      steps.push(`start ${name}`);
      try {
        if (name === 'torn') throw new Error('not a PDF');
      } catch {
        steps.push(`answer ${name}`);
      } finally {
        // As pdf.js's document destroy: the port is refused to others until it is done.
        if (name === 'torn') await cleanup;
        steps.push(`cleaned ${name}`);
      }
    });
    const first = handle('torn');
    const second = handle('referral');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(steps).toEqual(['start torn', 'answer torn']);
    finishCleanup();
    await Promise.all([first, second]);
    expect(steps).toEqual(['start torn', 'answer torn', 'cleaned torn', 'start referral', 'cleaned referral']);
  });

  it('goes on after a message whose handling fails', async () => {
    const seen: number[] = [];
    const handle = oneAtATime(async (n: number) => {
      seen.push(n);
      if (n === 1) throw new Error('crashed');
    });
    await expect(handle(1)).rejects.toThrow('crashed');
    await handle(2);
    expect(seen).toEqual([1, 2]);
  });
});
