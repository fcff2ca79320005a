/**
 * How people shorten the words of identifiers: abbreviations (cust_id, qty, amt, ts) spelled out, and
 * run-together names ("customerid", "songname") cut before a familiar last word, so both sides of a
 * comparison meet on the same word. General database vocabulary only, never words of one schema.
 */

/** Abbreviation → the word(s) it stands for (then stemmed and folded onto synonyms like any word). */
export const ABBREVIATIONS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    cust: 'customer',
    usr: 'user',
    emp: 'employee',
    empl: 'employee',
    mgr: 'manager',
    dept: 'department',
    org: 'organization',
    acct: 'account',
    addr: 'address',
    tel: 'phone',
    qty: 'quantity',
    qnty: 'quantity',
    amt: 'amount',
    amnt: 'amount',
    bal: 'balance',
    prc: 'price',
    pct: 'percent',
    num: 'number',
    nbr: 'number',
    cnt: 'count',
    avg: 'average',
    ttl: 'total',
    ts: 'timestamp',
    dt: 'date',
    yr: 'year',
    dob: 'birth',
    desc: 'description',
    descr: 'description',
    msg: 'message',
    img: 'image',
    prod: 'product',
    categ: 'category',
    inv: 'invoice',
    txn: 'transaction',
    trx: 'transaction',
    pmt: 'payment',
    pymt: 'payment',
    whse: 'warehouse',
    loc: 'location',
    cmpy: 'company',
    ctry: 'country',
    cntry: 'country',
    univ: 'university',
    stud: 'student',
    perf: 'performance',
    seq: 'sequence',
    src: 'source',
    dest: 'destination',
    info: 'information',
    lang: 'language',
    rbac: 'access control',
    acl: 'access control',
  }),
);

/** Last words that identifiers glue on without a separator ("customerid", "songname", "zipcode"). */
export const GLUED_LAST_WORDS: readonly string[] = [
  'id',
  'name',
  'code',
  'date',
  'type',
  'count',
  'number',
  'time',
  'year',
];

/** Column types that hold money: a question about revenue, sales or spend links to them. */
export function isMoneyType(type: string): boolean {
  let money = moneyTypes.get(type);
  if (money === undefined) {
    money = type === 'money' || /^(?:numeric|decimal)\(\d+,\s*2\)$/.test(type);
    if (moneyTypes.size < 10_000) moneyTypes.set(type, money);
  }
  return money;
}

const moneyTypes = new Map<string, boolean>();

/** The pseudo-term a money question and a money column share (no real word looks like it). */
export const MONEY_TERM = '$money';

/** Words of a question that ask about money, whatever the column is called (stems compared). */
export const MONEY_WORDS: ReadonlySet<string> = new Set([
  'revenue',
  'sales',
  'sale',
  'spend',
  'spent',
  'spending',
  'income',
  'earn',
  'earned',
  'earnings',
  'paid',
  'pay',
  'payment',
  'cost',
  'costs',
  'price',
  'prices',
  'amount',
  'money',
  'dollar',
  'dollars',
  'profit',
  'fee',
  'fees',
  'charge',
  'charged',
  'turnover',
]);
