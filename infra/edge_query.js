// Viewer request (CloudFront Functions, cloudfront-js-2.0): the query string sorted by parameter name, so
// `?b=2&a=1` and `?a=1&b=2` are one cache entry (CloudFront keys the query string as it comes). A repeated
// name keeps its values in their order (`?id=2&id=1` is not `?id=1&id=2` to the API). Names and values stay
// exactly as the viewer encoded them. Tested with node: tests/infrastructure/test_infra_edge_function.py.
function handler(event) {
    var request = event.request;
    var query = request.querystring;
    var pairs = [];
    for (var name in query) {
        var values = query[name].multiValue || [query[name]];
        for (var i = 0; i < values.length; i++) {
            pairs.push([name, values[i].value, pairs.length]);
        }
    }
    if (pairs.length === 0) {
        return request;
    }
    pairs.sort(function (a, b) {
        if (a[0] !== b[0]) {
            return a[0] < b[0] ? -1 : 1;
        }
        return a[2] - b[2];
    });
    var parts = [];
    for (var j = 0; j < pairs.length; j++) {
        parts.push(pairs[j][0] + "=" + pairs[j][1]);
    }
    request.querystring = parts.join("&");
    return request;
}
