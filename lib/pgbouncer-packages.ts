import * as s3 from 'aws-cdk-lib/aws-s3';

/**
 * The S3 object the hosts install from: a tar of the Debian 13 arm64 packages (PgBouncer 1.25.2, the
 * libraries the image lacks and AWS's SSM Agent for Session Manager), their SHA256SUMS and
 * rds-ca-bundle.pem, as `make pooler-packages` builds it. The data VPC has no route to Debian's mirrors,
 * so the packages come through the VPC's S3 gateway endpoint.
 */
export interface PgBouncerPackages {
  /** The bucket holding the object. */
  readonly bucket: s3.IBucket;
  /** The object's key. */
  readonly key: string;
}
