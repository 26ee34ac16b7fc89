export { ReceiptRepository } from './receipt-repository.js';
export { Receipts, receiptOf } from './receipts.js';
export { accountReceiptRoutes, adminReceiptRoutes } from './receipt-routes.js';
