/**
 * React helpers: Lumino signals, the ticking clock.
 */
import { ISignal } from '@lumino/signaling';
import { useEffect, useReducer, useState } from 'react';

/** Re-render the calling component whenever one of `signals` fires. */
export function useSignals(signals: ISignal<unknown, unknown>[]): void {
  const [, bump] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    const slot = (): void => bump();
    for (const signal of signals) {
      signal.connect(slot);
    }
    return () => {
      for (const signal of signals) {
        signal.disconnect(slot);
      }
    };
    // The signals of a section live as long as the section.
  }, signals);
}

/** The current Unix time, ticking every second while `live`. */
export function useNow(live: boolean): number {
  const [now, setNow] = useState(() => Date.now() / 1000);
  useEffect(() => {
    if (!live) {
      return;
    }
    setNow(Date.now() / 1000);
    const timer = window.setInterval(() => setNow(Date.now() / 1000), 1000);
    return () => window.clearInterval(timer);
  }, [live]);
  return live ? now : Date.now() / 1000;
}
