/**
 * What the host model (host-model.ts) says of one host, and the salts that keep its random streams
 * independent; robots-file.ts, sitemaps.ts and the page renderer read the same record.
 */
import type { RobotsVariant, Behaviour, DnsVariant, TrapKind } from './params.js';

// Salts separating the independent random streams.
export const S_HOSTS = 0x1001, S_PAGES = 0x1002, S_IP = 0x1003, S_ROBOTS = 0x1004, S_BEHAV = 0x1005, S_DNS = 0x1006,
  S_TRAP = 0x1007, S_PAGE = 0x1008, S_RULES = 0x1009, S_FARM = 0x100a, S_CHARSET = 0x100b, S_FILLER = 0x100c,
  S_SID = 0x100d, S_V6 = 0x100e;

export interface HostInfo {
  name: string;
  /** Registrable domain (last two labels). */
  pld: string;
  /** PLD index i for pld<i>.test, or -1 for a spam farm host. */
  pldIndex: number;
  /** Farm index k for farm<k>.test, or -1. */
  farm: number;
  /** Host number j inside its PLD (0 = www). */
  hostIndex: number;
  ip: string;
  ipIndex: number;
  /** Number of pages /p/0../p/(pages-1); Infinity on spam farms. */
  pages: number;
  robots: RobotsVariant;
  behaviour: Behaviour;
  dns: DnsVariant;
  trap: TrapKind | null;
  /** Crawl-delay (s) our agent's group declares, if any. */
  crawlDelay: number | undefined;
  /** Legacy charset of a 'charset' host and where it is declared. */
  charset: { name: string; where: 'header' | 'meta' | 'both' } | null;
}
