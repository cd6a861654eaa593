/**
 * A five-field cron as EventBridge Scheduler writes it: six fields (a year), `?` for the day field
 * left free, and days of the week numbered from 1 (Sunday) rather than 0.
 */
export function awsCronOf(cron: string): string {
  const [minute, hour, dom, month, dow] = cron.trim().split(/\s+/) as [string, string, string, string, string];
  const day = (n: string) => (/^\d+$/.test(n) ? String((Number(n) % 7) + 1) : n);
  const weekday = dow === '*' || dow === '?' ? '?' : dow.split(',').map((part) => part.replace(/^([^/]+)/, (range) => range.split('-').map(day).join('-'))).join(',');
  const monthDay = weekday === '?' ? dom.replace('?', '*') : '?';
  return `cron(${minute} ${hour} ${monthDay} ${month} ${weekday} *)`;
}
