// The job the scripted model plans in the jobs and cockpit suites: restock three products of the sample
// shop (3 rows: LOW, no modal). Under 60 characters: the job's title is the task's first line, cut at 60.
export const TASK = 'Restock products 1, 2 and 3 for the week';
export const WRITE_SQL = 'UPDATE products SET stock_quantity = stock_quantity + 10 WHERE id IN (1, 2, 3)';
export const READ_SQL = 'SELECT id, name, stock_quantity FROM products WHERE id IN (1, 2, 3) ORDER BY id';
export const TODOS_V1 = [
  { id: 'read-stock', title: 'Read the current stock', sql: READ_SQL },
  {
    id: 'restock',
    title: 'Add 5 units to products 1, 2 and 3',
    sql: 'UPDATE products SET stock_quantity = stock_quantity + 5 WHERE id IN (1, 2, 3)',
    depends_on: ['read-stock'],
  },
];
export const TODOS_V2 = [
  { id: 'read-stock', title: 'Read the current stock', sql: READ_SQL },
  { id: 'restock', title: 'Add 10 units to products 1, 2 and 3', sql: WRITE_SQL, depends_on: ['read-stock'] },
];
export const CHAT_QUESTION = 'Why only products 1, 2 and 3?';
export const FEEDBACK = 'Add 10 units instead of 5, and check the stock afterwards.';
