/**
 * Cloud IAM logins, chosen per profile: the password is a short-lived token made on this machine from the
 * person's cloud credentials (AWS RDS IAM: a signed URL valid 15 minutes; Azure Entra ID: an access token),
 * never stored. The SDKs are optional dependencies, loaded only when a profile uses them.
 */
export type IamAuth =
  | {
      provider: 'aws-rds';
      /** The database's AWS region (e.g. eu-west-1). */
      region: string;
      /** A named profile of ~/.aws/config; the SDK's default chain when absent. */
      awsProfile?: string;
    }
  | {
      provider: 'azure';
      /** The token's scope; Azure Database for PostgreSQL's when absent. */
      scope?: string;
    };

export const AZURE_POSTGRES_SCOPE = 'https://ossrdbms-aad.database.windows.net/.default';

/** The npm package each provider needs, and how a person gets it. */
export const IAM_PACKAGES: Record<IamAuth['provider'], string> = {
  'aws-rds': '@aws-sdk/rds-signer',
  azure: '@azure/identity',
};

export function describeIam(iam: IamAuth): string {
  return iam.provider === 'aws-rds'
    ? `AWS RDS IAM (${iam.region}${iam.awsProfile ? `, profile ${iam.awsProfile}` : ''})`
    : 'Azure Entra ID';
}
