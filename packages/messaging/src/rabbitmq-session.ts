import type { ChannelModel } from 'amqplib';
import { BusError } from './bus.js';

/**
 * The live connection, if any, and bounded waits for the next one. Set once a (re)connect's
 * setup has declared the topology; cleared when that connection closes.
 */
export class Session {
  private model: ChannelModel | null = null;
  private readonly waiters = new Set<{
    resolve: (m: ChannelModel) => void;
    reject: (e: Error) => void;
  }>();
  private closed = false;

  current(): ChannelModel | null {
    return this.model;
  }

  set(model: ChannelModel): void {
    this.model = model;
    for (const waiter of this.waiters) waiter.resolve(model);
    this.waiters.clear();
  }

  /** Only the connection that closed is forgotten: a newer one may already be set. */
  clear(model: ChannelModel): void {
    if (this.model === model) this.model = null;
  }

  wait(timeoutMs: number): Promise<ChannelModel> {
    if (this.closed) return Promise.reject(new BusError('closed', 'bus is closed'));
    if (this.model) return Promise.resolve(this.model);
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (model: ChannelModel) => {
          clearTimeout(timer);
          resolve(model);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(
        () => {
          this.waiters.delete(waiter);
          reject(new BusError('timeout', `not connected to RabbitMQ within ${timeoutMs} ms`));
        },
        Math.max(0, timeoutMs),
      );
      this.waiters.add(waiter);
    });
  }

  close(): void {
    this.closed = true;
    this.model = null;
    for (const waiter of this.waiters) waiter.reject(new BusError('closed', 'bus is closed'));
    this.waiters.clear();
  }
}
