/**
 * FollowedPipelines: what the jobs model knows of the pipelines, each one
 * row of the Jobs section: the listed page (`GET pipelines`), those just
 * submitted and on no page yet, and whether one is still active.
 */
import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import type { IPipeline } from '../api/types';
import { PipelinesClient } from './client';
import { isPipelineActive } from './format';

export class FollowedPipelines {
  constructor(settings: ServerConnection.ISettings) {
    this.client = new PipelinesClient(settings);
  }

  readonly client: PipelinesClient;

  /** The listed page, newest first. */
  get page(): IPipeline[] {
    return this._page;
  }

  /** How many the server has in all. */
  get total(): number {
    return this._total;
  }

  /** Just submitted, on no page yet. */
  get unlisted(): IPipeline[] {
    return this._unlisted;
  }

  /** Whether one may still change on its own (queued or running). */
  get anyActive(): boolean {
    return [...this._page, ...this._unlisted].some(p =>
      isPipelineActive(p.state)
    );
  }

  /** A pipeline seen queued or running has ended (once per end). */
  get ended(): ISignal<this, IPipeline> {
    return this._ended;
  }

  /** A pipeline as last seen (or null). */
  get(id: string): IPipeline | null {
    return [...this._unlisted, ...this._page].find(p => p.id === id) ?? null;
  }

  /** One just submitted: listed until a page has it. */
  add(pipeline: IPipeline): void {
    this._watch([pipeline]);
    this._unlisted = [
      pipeline,
      ...this._unlisted.filter(p => p.id !== pipeline.id)
    ];
  }

  /** One as an action answered it (cancel, rerun). */
  set(pipeline: IPipeline): void {
    const swap = (p: IPipeline): IPipeline =>
      p.id === pipeline.id ? pipeline : p;
    this._page = this._page.map(swap);
    this._unlisted = this._unlisted.map(swap);
    // the user's own action (a cancel) is no news to announce; a rerun is followed again
    if (isPipelineActive(pipeline.state)) {
      this._active.add(pipeline.id);
    } else {
      this._active.delete(pipeline.id);
    }
  }

  /** Ask the first `limit` (one request). */
  async update(limit: number): Promise<void> {
    const list = await this.client.list({ limit });
    this._page = list.items;
    this._total = list.total;
    const listed = new Set(list.items.map(p => p.id));
    this._unlisted = this._unlisted.filter(p => !listed.has(p.id));
    this._watch(list.items);
  }

  /** Remember the active ones; announce those seen active that have ended. */
  private _watch(pipelines: IPipeline[]): void {
    for (const pipeline of pipelines) {
      if (isPipelineActive(pipeline.state)) {
        this._active.add(pipeline.id);
      } else if (this._active.delete(pipeline.id)) {
        this._ended.emit(pipeline);
      }
    }
  }

  private _page: IPipeline[] = [];
  private _total = 0;
  private _unlisted: IPipeline[] = [];
  private _active = new Set<string>();
  private _ended = new Signal<this, IPipeline>(this);
}
