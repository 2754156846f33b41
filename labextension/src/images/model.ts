/**
 * ImagesModel: the packed images, asked when the Images section is shown,
 * after every task the tracker sees end (a pack makes an image), and every
 * 30 s while the section is visible.
 */
import type { IImage } from '../api/types';
import { PolledModel, scheduled } from '../components/polled';
import { ImagesClient } from './client';

/** Milliseconds between two refreshes of the list while visible. */
export const IMAGES_REFRESH_INTERVAL = 30 * 1000;

export class ImagesModel extends PolledModel {
  constructor(
    readonly client: ImagesClient,
    schedule: PolledModel.ISchedule = {}
  ) {
    super(
      scheduled('jupyter-gpu-env:images', IMAGES_REFRESH_INTERVAL, schedule)
    );
  }

  /** Images, or null before the first answer. */
  get images(): IImage[] | null {
    return this._images;
  }

  /** The listed image `id`, if it is listed. */
  find(id: string): IImage | undefined {
    return this._images?.find(image => image.id === id);
  }

  /**
   * Whether `id` appeared after the first listing: packed while this Lab
   * was open, so its "How to use" lines show open. Images already there
   * when the Lab opened stay closed (they would fill a narrow sidebar).
   */
  isNew(id: string): boolean {
    return this._new.has(id);
  }

  protected async fetch(): Promise<void> {
    const images = await this.client.list();
    if (this._images) {
      const known = new Set(this._images.map(image => image.id));
      for (const image of images) {
        if (!known.has(image.id)) {
          this._new.add(image.id);
        }
      }
    }
    this._images = images;
  }

  private _images: IImage[] | null = null;
  private _new = new Set<string>();
}
