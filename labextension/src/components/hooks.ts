/**
 * React helpers for Lumino signals.
 */
import { ISignal } from '@lumino/signaling';
import { useEffect, useReducer } from 'react';

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
