"""The X-Ray Tracer, for the probe and operator functions only.

Their runs make many upstream and DynamoDB calls worth a subsegment each. The lookup function does without:
importing the X-Ray SDK costs about a fifth of its cold start, and Lambda's active tracing still records
each invocation. No response is ever captured (calls carry relay credentials).
"""

from aws_lambda_powertools import Tracer

tracer = Tracer()  # the service name from POWERTOOLS_SERVICE_NAME, as everywhere
