/** The part of autocannon 8's API the bench uses (the package ships no types). */
declare module 'autocannon' {
  type Histogram = { average: number; p50: number; p99: number; total: number }
  export type Request = { method?: string; path?: string; headers?: Record<string, string>; body?: string; setupRequest?: (request: Request, context: Record<string, unknown>) => Request; onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void }
  export type Options = { url: string; connections: number; duration: number; headers?: Record<string, string>; requests?: Request[]; timeout?: number }
  export type Result = { latency: Histogram; requests: Histogram; duration: number; errors: number; timeouts: number; non2xx: number; '2xx': number }
  export default function autocannon(options: Options): Promise<Result>
}
