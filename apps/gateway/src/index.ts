export { buildGatewayApp, type GatewayDeps } from './app.ts';
export { startGateway, type RunningGateway } from './start-gateway.ts';
